package dev.atlas.autoconfigure.runtime;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.CallerSettings;
import dev.atlas.autoconfigure.settings.Reload;
import dev.atlas.autoconfigure.settings.ServiceSettings;
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
 * {@link ServiceRules}) and logged at INFO with what changed (old → new); an invalid one
 * is rejected for that service as a whole: its previous rules stay in force, one ERROR
 * names the property, the value and the allowed values, and {@value #REJECTED_METER}
 * counts it. Services are independent: one's invalid value does not hold back another's
 * valid change; an invalid value every service reads (a global one, or a caller-level
 * one) rejects the change for every service. Caller-level consumers hear of each change
 * through the {@link ReloadListener} beans.
 *
 * <p>
 * Properties read only at startup ({@link AtlasSettings#restartOnly()}) are not applied;
 * a change to one logs one WARN saying a restart is needed.
 *
 * <p>
 * Thread-safe: changes and registrations are serialized.
 *
 * @since 0.1.0
 */
public final class RuntimeRules {

	/**
	 * Counter of rejected runtime changes; tags {@code service} ({@value #GLOBAL_TAG} for
	 * the global rules).
	 */
	public static final String REJECTED_METER = "atlas.config.rejected";

	/**
	 * The {@code service} tag of {@value #REJECTED_METER} for a change of the global
	 * rules ({@code atlas.*} outside {@code atlas.services}).
	 */
	public static final String GLOBAL_TAG = "*";

	/** Counter of runtime changes put in force; tags {@code service}. */
	public static final String CHANGES_METER = "atlas.config.changes";

	private static final Logger log = LoggerFactory.getLogger(RuntimeRules.class);

	private final AtlasSettings settings;

	private final MeterRegistry meters;

	private final Clock clock;

	private final ObjectProvider<ReloadListener> listeners;

	private final Map<String, ServiceRules> routings = new ConcurrentHashMap<>();

	/**
	 * The last rejected attempt reported per service, so that the same one is not
	 * reported again on every refresh while it stays in the configuration.
	 */
	private final Map<String, String> lastRejection = new ConcurrentHashMap<>();

	/**
	 * Creates the applier.
	 * @param settings the settings in force
	 * @param meters where {@value #REJECTED_METER} and {@value #CHANGES_METER} are
	 * registered
	 * @param clock the time of changes
	 * @param listeners told of every change, in order
	 */
	public RuntimeRules(AtlasSettings settings, MeterRegistry meters, Clock clock,
			ObjectProvider<ReloadListener> listeners) {
		this.settings = settings;
		this.meters = meters;
		this.clock = clock;
		this.listeners = listeners;
		rejected(GLOBAL_TAG);
	}

	/**
	 * The counter of rejected changes of a service (registered at the service's
	 * registration, at 0, so that a query of its increase sees the first rejection).
	 */
	private Counter rejected(String service) {
		return Counter.builder(REJECTED_METER)
			.description("Runtime changes of routing rules rejected as invalid (the previous rules stay in "
					+ "force); service " + GLOBAL_TAG + " counts the global rules")
			.tag("service", service)
			.register(this.meters);
	}

	/**
	 * The counter of changes put in force for a service (registered as
	 * {@link #rejected}).
	 */
	private Counter changes(String serviceId) {
		return Counter.builder(CHANGES_METER)
			.description("Runtime changes of a service's routing rules put in force")
			.tag("service", serviceId)
			.register(this.meters);
	}

	/**
	 * Applies a change of the environment. Every change is looked at, not only one under
	 * {@code atlas}: an {@code atlas.*} value may come from a placeholder
	 * ({@code atlas.x.y=${sample.value:}}); when the resolved rules are the same, nothing
	 * happens.
	 * @param changedKeys the names of the properties that changed, as Spring Cloud's
	 * {@code EnvironmentChangeEvent} gives them
	 */
	public synchronized void refresh(Collection<String> changedKeys) {
		List<ConfigurationPropertyName> restartOnlyNames = this.settings.restartOnly()
			.stream()
			.map(ConfigurationPropertyName::of)
			.toList();
		List<String> restartOnly = new ArrayList<>();
		for (String key : changedKeys) {
			ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key.toLowerCase(Locale.ROOT), '.');
			if (restartOnlyNames.stream().anyMatch((other) -> other.equals(name) || other.isAncestorOf(name))) {
				restartOnly.add(key);
			}
		}
		if (!restartOnly.isEmpty()) {
			log.warn("Atlas: {} changed at runtime; read only at startup, so the change applies after a restart",
					restartOnly.stream().sorted().toList());
		}
		apply(this.settings.reload(), changedKeys);
	}

	private void apply(Reload reload, Collection<String> changedKeys) {
		CallerSettings caller = reload.caller();
		boolean callerValid = caller != null;
		if (caller != null) {
			this.settings.acceptCaller(reload);
			this.listeners.orderedStream()
				.forEach((listener) -> notify(listener, () -> listener.callerChanged(caller)));
		}
		// rejections grouped by message, so that one invalid value many services read
		// gives one ERROR line
		Map<String, List<String>> rejected = new LinkedHashMap<>();
		for (Map.Entry<String, Reload.Outcome> entry : reload.outcomes().entrySet()) {
			String serviceId = entry.getKey();
			Reload.Outcome outcome = entry.getValue();
			ServiceSettings next = outcome.next();
			RuntimeException error = outcome.error();
			if (error == null && next != null) {
				try {
					this.settings.check(this.settings.prefixFor(serviceId), next);
				}
				catch (RuntimeException ex) {
					error = ex;
				}
			}
			if (error == null && next != null && callerValid) {
				error = change(serviceId, outcome.previous(), next);
			}
			if (error == null) {
				this.lastRejection.remove(serviceId);
				continue;
			}
			String message = asWritten(serviceId, Reload.describe(error));
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
			boolean global = serviceIds.contains("");
			serviceIds.forEach((id) -> rejected(id.isEmpty() ? GLOBAL_TAG : id).increment());
			String which = services.isEmpty() ? "the global rules (atlas.*), which stay"
					: ((global ? "the global rules (atlas.*) and " : "")
							+ ((services.size() == 1) ? "service '" + services.get(0) + "', whose previous rules stay"
									: "services " + services + ", whose previous rules stay"));
			log.error("Atlas rejected the configuration change for {} in force: {}", which, message);
		});
		this.listeners.orderedStream().forEach((listener) -> notify(listener, () -> listener.changed(reload)));
	}

	/**
	 * Tells one listener of a change: one that throws is logged and skipped, so that the
	 * others still follow the rules in force and the refresh goes on.
	 */
	private static void notify(ReloadListener listener, Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			log.error("Atlas: {} failed to follow the configuration change: {}", listener, ex.toString(), ex);
		}
	}

	/**
	 * The message of a service's rejection naming the key that was written: a service's
	 * settings are checked under its own prefix ({@code atlas.services.<id>.…}), but a
	 * value the service does not set comes from the global key ({@code atlas.…}), which
	 * the message then names (and is the same for every such service, so reported once).
	 */
	String asWritten(String serviceId, String message) {
		if (serviceId.isEmpty()) {
			return message;
		}
		String prefix = this.settings.prefixFor(serviceId) + ".";
		int at = message.indexOf(prefix);
		if (at < 0 || prefix.equals(AtlasSettings.PREFIX + ".")) {
			return message;
		}
		int end = at + prefix.length();
		while (end < message.length() && isNameCharacter(message.charAt(end))) {
			end++;
		}
		String suffix = message.substring(at + prefix.length(), end);
		while (suffix.endsWith(".")) {
			suffix = suffix.substring(0, suffix.length() - 1);
		}
		if (suffix.isEmpty() || this.settings.isSet(prefix + suffix)
				|| !this.settings.isSet(AtlasSettings.PREFIX + "." + suffix)) {
			return message;
		}
		return message.replace(prefix, AtlasSettings.PREFIX + ".");
	}

	private static boolean isNameCharacter(char c) {
		return Character.isLetterOrDigit(c) || c == '.' || c == '-' || c == '[' || c == ']' || c == '_';
	}

	private static Set<String> atlasKeys(Collection<String> changedKeys) {
		Set<String> keys = new TreeSet<>();
		for (String key : changedKeys) {
			if (key.regionMatches(true, 0, AtlasSettings.PREFIX + ".", 0, AtlasSettings.PREFIX.length() + 1)) {
				keys.add(key);
			}
		}
		return keys;
	}

	/**
	 * Puts a service's valid new settings in force.
	 * @return why they could not be, or {@code null}
	 */
	private @Nullable RuntimeException change(String serviceId, ServiceSettings previous, ServiceSettings next) {
		ServiceRules routing = this.routings.get(serviceId);
		if (routing == null && next.equals(previous)) {
			return null;
		}
		List<Map<String, @Nullable Object>> stepsBefore = (routing != null) ? routing.stepViews() : List.of();
		this.settings.accept(serviceId, next);
		if (routing != null) {
			try {
				if (!routing.apply(next, this.clock.instant())) {
					return null;
				}
			}
			catch (RuntimeException ex) {
				this.settings.accept(serviceId, previous);
				return ex;
			}
		}
		if (serviceId.isEmpty() || shadowed(serviceId)) {
			return null;
		}
		changes(serviceId).increment();
		List<String> changes = RulesView.changes(RulesView.of(previous, stepsBefore),
				RulesView.of(next, (routing != null) ? routing.stepViews() : List.of()));
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
	 * Registers a service's routing, and its {@value #REJECTED_METER} and
	 * {@value #CHANGES_METER} counters at 0; when the settings in force changed while its
	 * context was being created, they are applied to it at once.
	 * @param routing the routing
	 */
	public synchronized void register(ServiceRules routing) {
		this.routings.put(routing.serviceId(), routing);
		rejected(routing.serviceId());
		changes(routing.serviceId());
		ServiceSettings inForce = this.settings.settingsFor(routing.serviceId());
		if (!inForce.equals(routing.settings())) {
			try {
				routing.apply(inForce, this.clock.instant());
			}
			catch (RuntimeException ex) {
				log.error(
						"Atlas could not put the rules in force for service '{}', which keeps those it started with: {}",
						routing.serviceId(), Reload.describe(ex));
			}
		}
	}

	/**
	 * Unregisters a service's routing (its context closed), and removes its counters.
	 * @param routing the routing
	 */
	public synchronized void unregister(ServiceRules routing) {
		if (this.routings.remove(routing.serviceId(), routing)) {
			this.meters.remove(rejected(routing.serviceId()));
			this.meters.remove(changes(routing.serviceId()));
		}
	}

}
