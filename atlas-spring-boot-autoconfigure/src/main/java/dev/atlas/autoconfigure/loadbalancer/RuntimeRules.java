package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.atlas.autoconfigure.AtlasProperties;
import dev.atlas.autoconfigure.AtlasSettings;
import dev.atlas.autoconfigure.ServiceSettings;
import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.autoconfigure.propagation.PropagatedHeaders;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * Applies changes of {@code atlas.*} made at runtime (Spring Cloud's refresh:
 * {@code /actuator/refresh}, a Nacos config push, Spring Cloud Config, Kubernetes config
 * reload) to every service, without a restart.
 *
 * <p>
 * For each service resolved so far (every configured one and every one called), the
 * settings are resolved again from the environment and checked as at startup. A valid
 * change is put in force as a whole (a new version of the service's routing, see
 * {@link ServiceRouting}) and logged at INFO with what changed (old → new); an invalid
 * one is rejected for that service as a whole: its previous rules stay in force, one
 * ERROR names the property, the value and the allowed values, and
 * {@value #REJECTED_METER} counts it. Services are independent: one's invalid value does
 * not hold back another's valid change; an invalid value every service reads (a global
 * one, or a caller-level one such as {@code atlas.affinity.*}) rejects the change for
 * every service.
 *
 * <p>
 * Properties read only at startup ({@link #RESTART_ONLY}) are not applied; a change to
 * one logs one WARN saying a restart is needed.
 *
 * <p>
 * Thread-safe: changes and registrations are serialized.
 *
 * @since 0.1.0
 */
public final class RuntimeRules {

	/** Counter of rejected runtime changes; tags {@code service}. */
	public static final String REJECTED_METER = "atlas.config.rejected";

	/** Counter of runtime changes put in force; tags {@code service}. */
	public static final String CHANGES_METER = "atlas.config.changes";

	/**
	 * Properties (and sections) that take effect only at startup: they decide which beans
	 * exist ({@code enabled} switches), how instances are parsed ({@code metadata-key}),
	 * the application's own registration and shutdown ({@code lifecycle}), and the
	 * registry's cache handling ({@code registry}).
	 */
	public static final List<String> RESTART_ONLY = List.of("atlas.enabled", "atlas.gray.enabled",
			"atlas.gray.metadata-key", "atlas.affinity.enabled", "atlas.propagation.enabled",
			"atlas.propagation.reactor-automatic", "atlas.lifecycle", "atlas.registry");

	private static final Logger log = LoggerFactory.getLogger(RuntimeRules.class);

	private static final List<ConfigurationPropertyName> RESTART_ONLY_NAMES = RESTART_ONLY.stream()
		.map(ConfigurationPropertyName::of)
		.toList();

	private final AtlasSettings settings;

	private final StrategyRegistry strategies;

	private final CallerCluster callerCluster;

	private final MeterRegistry meters;

	private final Clock clock;

	private final ObjectProvider<PropagatedHeaders> propagatedHeaders;

	private final ObjectProvider<LaneTagger> laneTagger;

	private final Map<String, ServiceRouting> routings = new ConcurrentHashMap<>();

	/**
	 * The last rejected attempt reported per service, so that the same one is not
	 * reported again on every refresh while it stays in the configuration.
	 */
	private final Map<String, String> lastRejection = new ConcurrentHashMap<>();

	/**
	 * Creates the applier.
	 * @param settings the settings in force
	 * @param strategies the registered strategies (a change must name one)
	 * @param callerCluster the caller's cluster (affinity rules)
	 * @param meters where {@value #REJECTED_METER} and {@value #CHANGES_METER} are
	 * registered
	 * @param clock the time of changes
	 * @param propagatedHeaders the headers carried from inbound requests, updated as the
	 * rules in force need (when propagation is on)
	 * @param laneTagger the lane rules where requests enter, updated to the rules in
	 * force
	 */
	public RuntimeRules(AtlasSettings settings, StrategyRegistry strategies, CallerCluster callerCluster,
			MeterRegistry meters, Clock clock, ObjectProvider<PropagatedHeaders> propagatedHeaders,
			ObjectProvider<LaneTagger> laneTagger) {
		this.settings = settings;
		this.strategies = strategies;
		this.callerCluster = callerCluster;
		this.meters = meters;
		this.clock = clock;
		this.propagatedHeaders = propagatedHeaders;
		this.laneTagger = laneTagger;
	}

	/**
	 * Applies a change of the environment. Every change is looked at, not only one under
	 * {@code atlas}: an {@code atlas.*} value may come from a placeholder
	 * ({@code atlas.affinity.cluster=${sample.cluster:}}); when the resolved rules are
	 * the same, nothing happens.
	 * @param changedKeys the names of the properties that changed, as Spring Cloud's
	 * {@code EnvironmentChangeEvent} gives them
	 */
	public synchronized void refresh(Collection<String> changedKeys) {
		List<String> restartOnly = new ArrayList<>();
		for (String key : changedKeys) {
			ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key.toLowerCase(Locale.ROOT), '.');
			if (RESTART_ONLY_NAMES.stream().anyMatch((other) -> other.equals(name) || other.isAncestorOf(name))) {
				restartOnly.add(key);
			}
		}
		if (!restartOnly.isEmpty()) {
			log.warn("Atlas: {} changed at runtime; read only at startup, so the change applies after a restart",
					restartOnly.stream().sorted().toList());
		}
		apply(this.settings.reload(), changedKeys);
	}

	private void apply(AtlasSettings.Reload reload, Collection<String> changedKeys) {
		AffinityRules affinity = null;
		if (reload.caller() != null) {
			this.settings.acceptCaller(reload);
			affinity = this.callerCluster.resolveNow();
		}
		// rejections grouped by message, so that one invalid value many services read
		// gives one ERROR line
		Map<String, List<String>> rejected = new LinkedHashMap<>();
		for (Map.Entry<String, AtlasSettings.Outcome> entry : reload.outcomes().entrySet()) {
			String serviceId = entry.getKey();
			AtlasSettings.Outcome outcome = entry.getValue();
			ServiceSettings next = outcome.next();
			RuntimeException error = outcome.error();
			if (error == null && next != null) {
				try {
					this.strategies.check(this.settings.prefixFor(serviceId), next);
				}
				catch (RuntimeException ex) {
					error = ex;
				}
			}
			if (error == null && next != null && affinity != null) {
				error = change(serviceId, outcome.previous(), next, affinity);
			}
			if (error == null) {
				this.lastRejection.remove(serviceId);
				continue;
			}
			String message = AtlasSettings.describe(error);
			// Reported (logged and counted) once per attempt: the rules tried, or the
			// atlas
			// keys changed when the rules cannot even be resolved; a refresh that changed
			// no atlas key repeats no report.
			Set<String> keys = atlasKeys(changedKeys);
			if (next == null && keys.isEmpty() && this.lastRejection.containsKey(serviceId)) {
				continue;
			}
			String attempt = message + " | " + ((next != null) ? next : keys);
			if (!attempt.equals(this.lastRejection.put(serviceId, attempt)) && !shadowed(serviceId)) {
				rejected.computeIfAbsent(message, (m) -> new ArrayList<>()).add(serviceId);
			}
		}
		rejected.forEach((message, serviceIds) -> {
			List<String> services = serviceIds.stream().filter((id) -> !id.isEmpty()).toList();
			services.forEach((id) -> Counter.builder(REJECTED_METER)
				.description("Runtime changes of a service's routing rules rejected as invalid (the previous rules "
						+ "stay in force)")
				.tag("service", id)
				.register(this.meters)
				.increment());
			String which = services.isEmpty() ? "the global rules (atlas.*), which stay"
					: ((services.size() == 1) ? "service '" + services.get(0) + "', whose previous rules stay"
							: "services " + services + ", whose previous rules stay");
			log.error("Atlas rejected the configuration change for {} in force: {}", which, message);
		});
		if (affinity != null && this.callerCluster.isResolved()) {
			// Before the first request, the rules stay unresolved: a registry integration
			// may still set the zone.
			this.callerCluster.put(affinity);
		}
		updatePropagatedHeaders(reload);
	}

	private static Set<String> atlasKeys(Collection<String> changedKeys) {
		Set<String> keys = new TreeSet<>();
		for (String key : changedKeys) {
			if (key.regionMatches(true, 0, AtlasProperties.PREFIX + ".", 0, AtlasProperties.PREFIX.length() + 1)) {
				keys.add(key);
			}
		}
		return keys;
	}

	/**
	 * Puts a service's valid new settings in force.
	 * @return why they could not be, or {@code null}
	 */
	private @Nullable RuntimeException change(String serviceId, ServiceSettings previous, ServiceSettings next,
			AffinityRules affinity) {
		ServiceRouting routing = this.routings.get(serviceId);
		// null: the service has no affinity filter of Atlas's, or it has not resolved its
		// rules yet (it then resolves them at its first request)
		AffinityRules before = (routing != null) ? routing.affinity() : null;
		boolean affinityChanges = before != null && !affinity.equals(before);
		if (next.equals(previous) && !affinityChanges) {
			return null;
		}
		this.settings.accept(serviceId, next);
		if (routing != null) {
			try {
				routing.apply(next, affinity, this.clock.instant());
			}
			catch (RuntimeException ex) {
				this.settings.accept(serviceId, previous);
				return ex;
			}
		}
		if (serviceId.isEmpty() || shadowed(serviceId)) {
			return null;
		}
		Counter.builder(CHANGES_METER)
			.description("Runtime changes of a service's routing rules put in force")
			.tag("service", serviceId)
			.register(this.meters)
			.increment();
		List<String> changes = RulesView.changes(RulesView.of(previous, before),
				RulesView.of(next, affinityChanges ? affinity : before));
		log.info("Atlas rules of service '{}' changed: {}", serviceId,
				changes.isEmpty() ? "(no visible difference)" : String.join("; ", changes));
		return null;
	}

	/**
	 * Whether a configured key is only another spelling of a service called under its own
	 * id (e.g. {@code user-service} configured, {@code USER-SERVICE} called): its outcome
	 * is reported for the called id alone.
	 */
	private boolean shadowed(String serviceId) {
		if (serviceId.isEmpty() || this.routings.containsKey(serviceId)) {
			return false;
		}
		return this.routings.keySet()
			.stream()
			.anyMatch((called) -> !called.equals(serviceId) && AtlasSettings.matches(serviceId, called));
	}

	/**
	 * The lane rules where requests enter: the caller-level ones of a reload whose
	 * caller-level settings are valid (lane rules and the gray header are caller-level,
	 * checked when the caller is bound); a reload with an invalid caller-level value
	 * changes nothing. A service whose own change is rejected keeps its previous rules
	 * for its calls.
	 */
	private void updateLaneTagger(AtlasSettings.Reload reload) {
		LaneTagger lanes = this.laneTagger.getIfAvailable();
		AtlasSettings.Caller caller = reload.caller();
		if (lanes == null || caller == null || !this.settings.grayEnabled()) {
			return;
		}
		List<LaneRule> rules = caller.gray().laneRules();
		String header = caller.gray().getHeader().trim();
		if (!rules.equals(lanes.rules()) || !header.equals(lanes.header())) {
			log.info("Atlas lane rules where requests enter: {} (was {})", rules, lanes.rules());
		}
		lanes.update(header, rules);
	}

	/**
	 * The propagated headers as the rules in force need them: the configured ones, and
	 * the gray and hash-key headers of every service's rules in force (not those of a
	 * change that was rejected).
	 */
	private void updatePropagatedHeaders(AtlasSettings.Reload reload) {
		updateLaneTagger(reload);
		PropagatedHeaders headers = this.propagatedHeaders.getIfAvailable();
		AtlasSettings.Caller caller = reload.caller();
		if (headers == null || caller == null) {
			return;
		}
		Set<String> names = new LinkedHashSet<>();
		caller.propagation().getHeaders().forEach((header) -> PropagatedHeaders.add(names, header));
		for (String serviceId : reload.outcomes().keySet()) {
			ServiceSettings inForce = this.settings.inForce(serviceId);
			if (inForce != null) {
				PropagatedHeaders.add(names, inForce.gray().header());
				PropagatedHeaders.add(names, inForce.gray().hashKeyHeader());
			}
		}
		if (!names.equals(new LinkedHashSet<>(headers.names()))) {
			log.info("Atlas propagates the headers {} (was {})", names, headers.names());
			headers.names(names);
		}
	}

	/**
	 * Registers a service's routing; when the settings in force changed while its context
	 * was being created, they are applied to it at once.
	 * @param routing the routing
	 */
	synchronized void register(ServiceRouting routing) {
		this.routings.put(routing.serviceId(), routing);
		ServiceSettings inForce = this.settings.settingsFor(routing.serviceId());
		if (!inForce.equals(routing.settings())) {
			try {
				// the caller's cluster is not resolved here: a registry integration may
				// still set the zone while this context is created
				routing.apply(inForce, this.callerCluster.isResolved() ? this.callerCluster.rules() : null,
						this.clock.instant());
			}
			catch (RuntimeException ex) {
				log.error(
						"Atlas could not put the rules in force for service '{}', which keeps those it started with: {}",
						routing.serviceId(), AtlasSettings.describe(ex));
			}
		}
	}

	/**
	 * Unregisters a service's routing (its context closed).
	 * @param routing the routing
	 */
	synchronized void unregister(ServiceRouting routing) {
		this.routings.remove(routing.serviceId(), routing);
	}

}
