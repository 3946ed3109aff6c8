package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.atlas.autoconfigure.AtlasProperties;
import dev.atlas.autoconfigure.AtlasSettings;
import dev.atlas.autoconfigure.ServiceSettings;
import dev.atlas.loadbalancer.routing.AffinityRules;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 */
public final class RuntimeRules {

	private static final Logger log = LoggerFactory.getLogger(RuntimeRules.class);

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

	private static final List<ConfigurationPropertyName> RESTART_ONLY_NAMES = RESTART_ONLY.stream()
		.map(ConfigurationPropertyName::of)
		.toList();

	private final AtlasSettings settings;

	private final StrategyRegistry strategies;

	private final CallerCluster callerCluster;

	private final MeterRegistry meters;

	private final Clock clock;

	private final Map<String, ServiceRouting> routings = new ConcurrentHashMap<>();

	/**
	 * Creates the applier.
	 * @param settings the settings in force
	 * @param strategies the registered strategies (a change must name one)
	 * @param callerCluster the caller's cluster (affinity rules)
	 * @param meters where {@value #REJECTED_METER} and {@value #CHANGES_METER} are
	 * registered
	 * @param clock the time of changes
	 */
	public RuntimeRules(AtlasSettings settings, StrategyRegistry strategies, CallerCluster callerCluster,
			MeterRegistry meters, Clock clock) {
		this.settings = settings;
		this.strategies = strategies;
		this.callerCluster = callerCluster;
		this.meters = meters;
		this.clock = clock;
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
		apply(this.settings.reload());
	}

	private void apply(AtlasSettings.Reload reload) {
		AffinityRules affinity = null;
		if (reload.caller() != null) {
			this.settings.acceptCaller(reload);
			affinity = this.callerCluster.resolveNow();
		}
		for (Map.Entry<String, AtlasSettings.Outcome> entry : reload.outcomes().entrySet()) {
			String serviceId = entry.getKey();
			AtlasSettings.Outcome outcome = entry.getValue();
			ServiceSettings next = outcome.next();
			if (serviceId.isEmpty()) {
				if (next != null) {
					this.settings.accept("", next);
				}
				continue;
			}
			RuntimeException error = outcome.error();
			if (error == null) {
				try {
					this.strategies.check(prefixFor(serviceId), next);
				}
				catch (RuntimeException ex) {
					error = ex;
				}
			}
			if (error != null || next == null || affinity == null) {
				reject(serviceId, error);
				continue;
			}
			change(serviceId, outcome.previous(), next, affinity);
		}
		if (affinity != null) {
			this.callerCluster.put(affinity);
		}
	}

	private void change(String serviceId, ServiceSettings previous, ServiceSettings next, AffinityRules affinity) {
		ServiceRouting routing = this.routings.get(serviceId);
		// null: the service has no affinity filter of Atlas's, or it has not resolved its
		// rules yet (it then takes those put in force below at its first request)
		AffinityRules before = (routing != null) ? routing.affinity() : null;
		boolean affinityChanges = before != null && !affinity.equals(before);
		if (next.equals(previous) && !affinityChanges) {
			return;
		}
		this.settings.accept(serviceId, next);
		if (routing != null) {
			try {
				routing.apply(next, affinity, this.clock.instant());
			}
			catch (RuntimeException ex) {
				this.settings.accept(serviceId, previous);
				reject(serviceId, ex);
				return;
			}
		}
		Counter.builder(CHANGES_METER)
			.description("Runtime changes of a service's routing rules put in force")
			.tag("service", serviceId)
			.register(this.meters)
			.increment();
		List<String> changes = RulesView.changes(RulesView.of(previous, before), RulesView.of(next, affinity));
		log.info("Atlas rules of service '{}' changed: {}", serviceId,
				changes.isEmpty() ? "(no visible difference)" : String.join("; ", changes));
	}

	private void reject(String serviceId, @Nullable RuntimeException error) {
		Counter.builder(REJECTED_METER)
			.description("Runtime changes of a service's routing rules rejected as invalid (the previous rules stay)")
			.tag("service", serviceId)
			.register(this.meters)
			.increment();
		log.error("Atlas rejected the configuration change for service '{}', whose previous rules stay in force: {}",
				serviceId, (error != null) ? AtlasSettings.describe(error) : "invalid caller-level settings");
	}

	/** Where a service's strategy is configured, for messages. */
	private String prefixFor(String serviceId) {
		Set<String> configured = this.settings.configuredServiceIds();
		String key = configured.contains(serviceId) ? serviceId
				: configured.stream().filter((k) -> AtlasSettings.matches(k, serviceId)).findFirst().orElse(null);
		return (key != null) ? this.settings.propertyPrefix(key) : AtlasProperties.PREFIX;
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
				routing.apply(inForce, this.callerCluster.rules(), this.clock.instant());
			}
			catch (RuntimeException ex) {
				reject(routing.serviceId(), ex);
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

	/**
	 * The routing of a service, while its context lives.
	 * @param serviceId the service id
	 * @return {@code null} when the service has no load-balancer context
	 */
	public @Nullable ServiceRouting routing(String serviceId) {
		return this.routings.get(serviceId);
	}

}
