package dev.atlas.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.ServiceOverlay.Section;
import dev.atlas.loadbalancer.routing.AffinityRules;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * The settings as the load-balancer wiring uses them: per service
 * ({@link #settingsFor(String)}) and per caller ({@link #affinity(String)}).
 *
 * <p>
 * A service's settings are resolved once, generically, for every section a service can
 * override ({@code loadbalancer}, {@code gray}, {@code warmup}, {@code outlier}): the
 * global section {@code atlas.<section>} is bound into a fresh object, then
 * {@code atlas.services.<key>.<section>} onto the same instance, with Spring Boot's
 * {@link Binder}, for every configured key that {@link #matches(String, String) matches}
 * the service id (its own spelling last, so it wins); properties that only exist per
 * service (the canary {@code gray.weights}) are never read from the global section. The
 * result is cached per service id. Every service configured under {@code atlas.services}
 * is resolved at startup, so an invalid value fails startup with a message naming the
 * property.
 *
 * <p>
 * <strong>Runtime changes.</strong> {@link #reload()} reads the environment again (after
 * Spring Cloud's refresh changed it) and resolves every service known so far, without
 * applying anything; {@link #accept} puts one service's new settings in force. The
 * caller-level sections ({@code atlas.gray.*} caller settings, {@code atlas.affinity.*},
 * the configured keys) are bound here, from the environment, into objects of this class's
 * own: Spring Cloud rebinds the application's {@code @ConfigurationProperties} beans in
 * place, and a rejected change must not reach the rules in force through them.
 *
 * <p>
 * Thread-safe.
 */
public class AtlasSettings {

	private static final Logger log = LoggerFactory.getLogger(AtlasSettings.class);

	private static final Section<LoadBalancerProperties> LOADBALANCER = new Section<>("loadbalancer",
			LoadBalancerProperties::new);

	private static final Section<ServiceGrayProperties> GRAY = new Section<>("gray", ServiceGrayProperties::new,
			Set.of(ServiceGrayProperties.WEIGHTS));

	private static final Section<WarmupProperties> WARMUP = new Section<>("warmup", WarmupProperties::new);

	private static final Section<OutlierProperties> OUTLIER = new Section<>("outlier", OutlierProperties::new);

	private final Supplier<Binder> binders;

	private volatile Caller caller;

	private final ConcurrentMap<String, ServiceSettings> resolved = new ConcurrentHashMap<>();

	private volatile boolean reloaded;

	private final String metadataKey;

	private final boolean grayEnabled;

	private final boolean affinityEnabled;

	private final Duration staleLimit;

	private volatile BiConsumer<String, ServiceSettings> check = (prefix, settings) -> {
	};

	/**
	 * Creates the settings and resolves every configured service.
	 * @param environment where {@code atlas.*} is read from, at startup and on every
	 * {@link #reload()} (into objects of this class's own, never the application's
	 * {@code @ConfigurationProperties} beans)
	 * @throws IllegalArgumentException or
	 * {@link org.springframework.boot.context.properties.bind.BindException} naming the
	 * property when a configured service has an invalid value
	 */
	public AtlasSettings(ConfigurableEnvironment environment) {
		this((Supplier<Binder>) () -> binder(environment));
	}

	/**
	 * A binder of the environment as it is now, with Atlas's converters.
	 * @param environment the application's environment
	 * @return a new binder
	 */
	public static Binder binder(ConfigurableEnvironment environment) {
		return new Binder(ConfigurationPropertySources.get(environment),
				new PropertySourcesPlaceholdersResolver(environment), AtlasValueConverters.conversionService());
	}

	AtlasSettings(Binder binder) {
		this((Supplier<Binder>) () -> binder);
	}

	AtlasSettings(Supplier<Binder> binders) {
		this.binders = binders;
		Binder binder = binders.get();
		// Copies of the beans, bound the same way: Spring Cloud rebinds the beans in
		// place
		// on a refresh, rejected values included.
		this.caller = Caller.bind(binder, null);
		// read only at startup
		this.metadataKey = this.caller.gray().getMetadataKey();
		this.grayEnabled = this.caller.gray().isEnabled();
		this.affinityEnabled = this.caller.affinity().isEnabled();
		RegistryProperties registry = binder
			.bind(RegistryProperties.PREFIX, Bindable.ofInstance(new RegistryProperties()))
			.orElseGet(RegistryProperties::new);
		registry.afterPropertiesSet();
		this.staleLimit = registry.getStaleLimit();
		settingsFor("");
		configuredServiceIds().forEach(this::settingsFor);
	}

	/**
	 * The settings of calls to one service: its overrides under every key of
	 * {@code atlas.services} that {@link #matches(String, String) matches} its id (the
	 * key spelled exactly as the id last, so it wins), else the global values. Resolved
	 * on first use and cached per id as given; replaced by {@link #accept}.
	 * @param serviceId the service id; empty for the global values (no service in
	 * particular)
	 * @return the settings in force
	 * @throws IllegalArgumentException or
	 * {@link org.springframework.boot.context.properties.bind.BindException} naming the
	 * property when a value of this service is invalid (at startup; after a runtime
	 * change was rejected, a service used for the first time gets the global settings in
	 * force and one ERROR)
	 */
	public ServiceSettings settingsFor(String serviceId) {
		Objects.requireNonNull(serviceId, "serviceId");
		ServiceSettings settings = this.resolved.get(serviceId);
		return (settings != null) ? settings : this.resolved.computeIfAbsent(serviceId, this::firstResolution);
	}

	private ServiceSettings firstResolution(String serviceId) {
		if (!this.reloaded || serviceId.isEmpty()) {
			return resolve(this.caller, serviceId);
		}
		try {
			ServiceSettings settings = resolve(this.caller, serviceId);
			this.check.accept(prefixFor(serviceId), settings);
			return settings;
		}
		catch (RuntimeException ex) {
			// the rules in force of the most specific configured key that applies to it,
			// else the global ones
			List<String> keys = ServiceOverlay.keysFor(this.caller.atlas().getServices().keySet(), serviceId);
			for (int i = keys.size() - 1; i >= 0; i--) {
				ServiceSettings configured = this.resolved.get(keys.get(i));
				if (configured != null) {
					log.error("Atlas rules of service '{}': {}; it gets the rules in force for {} until the "
							+ "configuration is fixed", serviceId, describe(ex), propertyPrefix(keys.get(i)));
					return configured;
				}
			}
			ServiceSettings global = Objects.requireNonNull(this.resolved.get(""), "global settings");
			log.error("Atlas rules of service '{}': {}; it gets the global rules in force until the configuration is "
					+ "fixed", serviceId, describe(ex));
			return global;
		}
	}

	/**
	 * The settings in force for a service, without resolving them when they are not yet.
	 * @param serviceId the service id; empty for the global settings
	 * @return {@code null} when the service has not been resolved
	 */
	public @Nullable ServiceSettings inForce(String serviceId) {
		return this.resolved.get(serviceId);
	}

	/**
	 * The affinity rules of this caller, the same for every service it calls.
	 * @param defaultCluster the cluster to use when {@code atlas.affinity.cluster} is not
	 * set (the Nacos cluster name, else the zone of Spring Cloud's
	 * {@code LoadBalancerZoneConfig}), may be {@code null}
	 * @return without a cluster (affinity off) when disabled or when there is none
	 * @throws IllegalArgumentException naming the property when a threshold is out of
	 * range
	 */
	public AffinityRules affinity(@Nullable String defaultCluster) {
		AffinityProperties current = this.caller.affinity();
		if (current.isEnabled() == this.affinityEnabled) {
			return current.toRules(defaultCluster);
		}
		// atlas.affinity.enabled is read only at startup
		AffinityProperties asAtStartup = new AffinityProperties();
		asAtStartup.setEnabled(this.affinityEnabled);
		asAtStartup.setCluster(current.getCluster());
		asAtStartup.setMinHealthyRatio(current.getMinHealthyRatio());
		asAtStartup.setMinInstances(current.getMinInstances());
		return asAtStartup.toRules(defaultCluster);
	}

	/**
	 * The affinity settings in force ({@code atlas.affinity.*}).
	 * @return do not modify
	 */
	public AffinityProperties affinityProperties() {
		return this.caller.affinity();
	}

	/**
	 * The instance metadata key of gray tags, as at startup
	 * ({@code atlas.gray.metadata-key} is read only at startup).
	 * @return not blank
	 */
	public String metadataKey() {
		return this.metadataKey;
	}

	/**
	 * Whether gray routing is on ({@code atlas.gray.enabled}), as at startup: read only
	 * at startup.
	 * @return the startup value
	 */
	public boolean grayEnabled() {
		return this.grayEnabled;
	}

	/**
	 * Whether cluster affinity is on ({@code atlas.affinity.enabled}), as at startup:
	 * read only at startup.
	 * @return the startup value
	 */
	public boolean affinityEnabled() {
		return this.affinityEnabled;
	}

	/**
	 * How long empty registry answers are overridden
	 * ({@code atlas.registry.stale-limit}), as at startup: read only at startup.
	 * @return not negative
	 */
	public Duration staleLimit() {
		return this.staleLimit;
	}

	/**
	 * Sets the check that the settings of a service resolved for the first time after a
	 * runtime change must pass (the strategy is registered, and so on), as the startup
	 * checks do for the configured services; one that fails gets the global settings in
	 * force instead, with one ERROR.
	 * @param check given where the service's settings are written (e.g.
	 * {@code atlas.services.user-service}, or {@code atlas}) and the settings; throws
	 * {@link IllegalArgumentException} naming the property when they are invalid
	 */
	public void check(BiConsumer<String, ServiceSettings> check) {
		this.check = Objects.requireNonNull(check, "check");
	}

	/**
	 * Where the settings of a service are written, for messages: the configured key that
	 * applies to it ({@link #propertyPrefix(String)}), else {@code atlas}.
	 * @param serviceId the service id; empty for the global settings
	 * @return e.g. {@code atlas.services.user-service} or {@code atlas}
	 */
	public String prefixFor(String serviceId) {
		Set<String> configured = configuredServiceIds();
		String key = configured.contains(serviceId) ? serviceId
				: configured.stream().filter((k) -> matches(k, serviceId)).findFirst().orElse(null);
		return (key != null) ? propertyPrefix(key) : AtlasProperties.PREFIX;
	}

	/**
	 * The services with settings of their own, under {@code atlas.services}.
	 * @return service ids, in configuration order
	 */
	public Set<String> configuredServiceIds() {
		return this.caller.configuredServiceIds();
	}

	/**
	 * Whether the settings written under a configured key apply to a service: the key
	 * equals the service id ignoring case, or (ids without dots) Spring Boot's relaxed
	 * forms of both are equal (case, {@code -} and {@code _} ignored).
	 * @param key a key of {@link #configuredServiceIds()}
	 * @param serviceId the service id a client calls
	 * @return whether {@link #settingsFor(String) settingsFor(serviceId)} reads that
	 * key's settings
	 */
	public static boolean matches(String key, String serviceId) {
		return ServiceOverlay.matches(Objects.requireNonNull(key, "key"),
				Objects.requireNonNull(serviceId, "serviceId"));
	}

	/**
	 * How a configured key is written, for messages.
	 * @param key a key of {@link #configuredServiceIds()}
	 * @return e.g. {@code atlas.services.user-service} or
	 * {@code atlas.services[user.service]}
	 */
	public String propertyPrefix(String key) {
		String name = ServiceOverlay.propertyName(key, "x");
		return name.substring(0, name.length() - 2);
	}

	/**
	 * Reads the environment again and resolves, without putting anything in force, the
	 * settings of every service resolved so far and of every service configured now.
	 * @return what each service's settings would become, or why they cannot
	 */
	public Reload reload() {
		this.reloaded = true;
		Map<String, Outcome> outcomes = new LinkedHashMap<>();
		Set<String> ids = new LinkedHashSet<>();
		ids.add("");
		ids.addAll(this.resolved.keySet());
		Caller fresh;
		try {
			fresh = Caller.bind(this.binders.get(), this.metadataKey);
		}
		catch (RuntimeException ex) {
			ids.forEach((id) -> outcomes.put(id, new Outcome(previous(id), null, ex)));
			return new Reload(null, outcomes);
		}
		ids.addAll(fresh.configuredServiceIds());
		for (String id : ids) {
			ServiceSettings previous = previous(id);
			try {
				outcomes.put(id, new Outcome(previous, resolve(fresh, id), null));
			}
			catch (RuntimeException ex) {
				outcomes.put(id, new Outcome(previous, null, ex));
			}
		}
		return new Reload(fresh, outcomes);
	}

	/**
	 * The settings in force, or what an id not resolved yet would have had: the global.
	 */
	private ServiceSettings previous(String id) {
		ServiceSettings known = this.resolved.get(id);
		return (known != null) ? known : Objects.requireNonNull(this.resolved.get(""), "global settings");
	}

	/**
	 * Puts the caller-level settings of a reload in force (affinity, configured keys, the
	 * caller's gray settings), for services resolved from now on; each service's own
	 * settings are put in force by {@link #accept}.
	 * @param reload a reload whose caller-level settings are valid
	 */
	public void acceptCaller(Reload reload) {
		Caller fresh = reload.caller;
		if (fresh != null) {
			this.caller = fresh;
		}
	}

	/**
	 * Puts one service's settings in force (or back, to undo), as they are: the caller
	 * checks them first.
	 * @param serviceId the service id, empty for the global settings
	 * @param settings the settings
	 */
	public void accept(String serviceId, ServiceSettings settings) {
		this.resolved.put(Objects.requireNonNull(serviceId, "serviceId"), Objects.requireNonNull(settings, "settings"));
	}

	/**
	 * A message for a rejected value: the property, the value, and what is allowed.
	 * @param ex what resolving threw
	 * @return one line
	 */
	public static String describe(Throwable ex) {
		if (ex instanceof BindException bind) {
			ConfigurationProperty property = bind.getProperty();
			Throwable root = bind;
			while (root.getCause() != null && root.getCause() != root) {
				root = root.getCause();
			}
			String name = (property != null) ? property.getName().toString() : bind.getName().toString();
			String value = (property != null) ? " = '" + property.getValue() + "'" : "";
			return "Invalid " + name + value + ": " + root.getMessage();
		}
		return String.valueOf(ex.getMessage());
	}

	private ServiceSettings resolve(Caller caller, String serviceId) {
		ServiceOverlay overlay = new ServiceOverlay(caller.binder());
		List<String> keys = ServiceOverlay.keysFor(caller.atlas().getServices().keySet(), serviceId);
		LoadBalancerProperties loadbalancer = overlay.bind(LOADBALANCER, keys);
		String loadbalancerPrefix = ServiceOverlay.propertyName(serviceId, LOADBALANCER.name());
		ServiceGrayProperties lanes = overlay.bind(GRAY, keys);
		WarmupProperties warmup = overlay.bind(WARMUP, keys);
		OutlierProperties outlier = overlay.bind(OUTLIER, keys);
		return new ServiceSettings(loadbalancer.getStrategy(), loadbalancer.getAllZeroWeights(), this.grayEnabled,
				caller.gray().rulesFor(serviceId, lanes),
				warmup.toRules(ServiceOverlay.propertyName(serviceId, WARMUP.name())),
				outlier.toRules(ServiceOverlay.propertyName(serviceId, OUTLIER.name())),
				loadbalancer.leastRequestRules(loadbalancerPrefix), loadbalancer.peakEwmaRules(loadbalancerPrefix),
				loadbalancer.hashRules(loadbalancerPrefix));
	}

	/**
	 * The result of {@link #reload()}.
	 *
	 * @param caller the caller-level settings read, or {@code null} when they are invalid
	 * (then every outcome is an error)
	 * @param outcomes by service id (the empty id for the global settings), in order
	 */
	public record Reload(@Nullable Caller caller, Map<String, Outcome> outcomes) {
	}

	/**
	 * What one service's settings would become.
	 *
	 * @param previous the settings in force
	 * @param next the new settings, or {@code null} when {@code error} is set
	 * @param error why the new settings are invalid, or {@code null}
	 */
	public record Outcome(ServiceSettings previous, @Nullable ServiceSettings next, @Nullable RuntimeException error) {
	}

	/**
	 * The caller-level settings, bound from the environment.
	 *
	 * @param binder binds from the environment at the time
	 * @param atlas the configured keys
	 * @param gray the caller's gray settings
	 * @param affinity the caller's affinity settings
	 * @param propagation the propagated headers
	 */
	public record Caller(Binder binder, AtlasProperties atlas, GrayProperties gray, AffinityProperties affinity,
			PropagationProperties propagation) {

		/**
		 * Binds the caller-level sections.
		 * @param metadataKey the startup value of {@code atlas.gray.metadata-key}, which
		 * is read only at startup (so a value changed later is not checked), or
		 * {@code null} at startup
		 */
		static Caller bind(Binder binder, @Nullable String metadataKey) {
			AtlasProperties atlas = binder.bind(AtlasProperties.PREFIX, Bindable.ofInstance(new AtlasProperties()))
				.orElseGet(AtlasProperties::new);
			checkLaneRuleKeys(binder);
			GrayProperties gray = binder.bind(GrayProperties.PREFIX, Bindable.ofInstance(new GrayProperties()))
				.orElseGet(GrayProperties::new);
			AffinityProperties affinity = binder
				.bind(AffinityProperties.PREFIX, Bindable.ofInstance(new AffinityProperties()))
				.orElseGet(AffinityProperties::new);
			PropagationProperties propagation = binder
				.bind(PropagationProperties.PREFIX, Bindable.ofInstance(new PropagationProperties()))
				.orElseGet(PropagationProperties::new);
			if (metadataKey != null) {
				gray.setMetadataKey(metadataKey);
			}
			gray.afterPropertiesSet();
			affinity.afterPropertiesSet();
			return new Caller(binder, atlas, gray, affinity, propagation);
		}

		/**
		 * Fails on a key a lane rule does not have (e.g. {@code contains}), which binding
		 * alone would ignore, so that a misspelt matcher does not make a rule that never
		 * matches.
		 */
		private static void checkLaneRuleKeys(Binder binder) {
			String prefix = GrayProperties.PREFIX + ".rules";
			try {
				binder.bind(prefix, Bindable.listOf(LaneRuleProperties.class),
						new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
			}
			catch (BindException ex) {
				if (ex.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
					String names = unbound.getUnboundProperties()
						.stream()
						.map((property) -> property.getName().toString())
						.sorted()
						.collect(Collectors.joining(", "));
					throw new IllegalArgumentException("Invalid " + names + ": unknown key of a lane rule (a rule has "
							+ LaneRuleProperties.ALLOWED_KEYS + ")", ex);
				}
				throw ex;
			}
		}

		Set<String> configuredServiceIds() {
			return new LinkedHashSet<>(this.atlas.getServices().keySet());
		}

	}

}
