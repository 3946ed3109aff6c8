package dev.atlas.autoconfigure.settings;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * The settings as the load-balancer wiring uses them: per service
 * ({@link #settingsFor(String)}) and per caller ({@link #caller(CallerSection)}).
 *
 * <p>
 * A service's settings are resolved once, generically, for every registered
 * {@link Section}: the global section {@code atlas.<section>} is bound into a fresh
 * object, then {@code atlas.services.<key>.<section>} onto the same instance, with Spring
 * Boot's {@link Binder}, for every configured key that {@link #matches(String, String)
 * matches} the service id (its own spelling last, so it wins); properties that only exist
 * per service are never read from the global section. Each section turns what was bound
 * into its rules. The result is cached per service id. Every service configured under
 * {@code atlas.services} is resolved at startup, so an invalid value fails startup with a
 * message naming the property.
 *
 * <p>
 * <strong>Runtime changes.</strong> {@link #reload()} reads the environment again (after
 * Spring Cloud's refresh changed it) and resolves every service known so far, without
 * applying anything; {@link #accept} puts one service's new settings in force. The
 * caller-level sections ({@link CallerSection}) and the configured keys are bound here,
 * from the environment, into objects of this class's own: Spring Cloud rebinds the
 * application's {@code @ConfigurationProperties} beans in place, and a rejected change
 * must not reach the rules in force through them.
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class AtlasSettings {

	/**
	 * Prefix of every Atlas property, {@code atlas}: each section's properties class
	 * builds its own prefix from it.
	 */
	public static final String PREFIX = "atlas";

	private static final Logger log = LoggerFactory.getLogger(AtlasSettings.class);

	/**
	 * Properties (and sections) read only at startup whoever declares sections: the
	 * on/off switch, propagation's switches, the application's own registration and
	 * shutdown, the registry's cache handling.
	 */
	private static final List<String> RESTART_ONLY = List.of("atlas.enabled", "atlas.propagation.enabled",
			"atlas.propagation.reactor-automatic", "atlas.lifecycle", "atlas.registry");

	private final Supplier<Binder> binders;

	private final List<Section<?, ?>> sections;

	private final List<CallerSection<?>> callerSections;

	private final CallerSettings atStartup;

	private volatile CallerSettings caller;

	private final ConcurrentMap<String, ServiceSettings> resolved = new ConcurrentHashMap<>();

	private volatile boolean reloaded;

	private final List<BiConsumer<String, ServiceSettings>> checks = new CopyOnWriteArrayList<>();

	/**
	 * Creates the settings and resolves every configured service.
	 * @param environment where {@code atlas.*} is read from, at startup and on every
	 * {@link #reload()} (into objects of this class's own, never the application's
	 * {@code @ConfigurationProperties} beans)
	 * @param sections the per-service sections, in order
	 * @param callerSections the caller-level sections
	 * @throws IllegalArgumentException or
	 * {@link org.springframework.boot.context.properties.bind.BindException} naming the
	 * property when a configured service has an invalid value
	 */
	public AtlasSettings(ConfigurableEnvironment environment, List<Section<?, ?>> sections,
			List<CallerSection<?>> callerSections) {
		this(() -> binder(environment), sections, callerSections);
	}

	/**
	 * Creates the settings from one binder (tests, tools).
	 * @param binder binds {@code atlas.*}
	 * @param sections the per-service sections, in order
	 * @param callerSections the caller-level sections
	 * @throws IllegalArgumentException or
	 * {@link org.springframework.boot.context.properties.bind.BindException} naming the
	 * property when a configured service has an invalid value
	 */
	public AtlasSettings(Binder binder, List<Section<?, ?>> sections, List<CallerSection<?>> callerSections) {
		this(() -> binder, sections, callerSections);
	}

	private AtlasSettings(Supplier<Binder> binders, List<Section<?, ?>> sections,
			List<CallerSection<?>> callerSections) {
		this.binders = binders;
		this.sections = List.copyOf(sections);
		this.callerSections = List.copyOf(callerSections);
		Binder binder = binders.get();
		this.atStartup = CallerSettings.bind(binder, this.callerSections, null);
		this.caller = this.atStartup;
		settingsFor("");
		configuredServiceIds().forEach(this::settingsFor);
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
			check(prefixFor(serviceId), settings);
			return settings;
		}
		catch (RuntimeException ex) {
			// the rules in force of the most specific configured key that applies to it,
			// else the global ones
			List<String> keys = ServiceOverlay.keysFor(this.caller.configuredServiceIds(), serviceId);
			for (int i = keys.size() - 1; i >= 0; i--) {
				ServiceSettings configured = this.resolved.get(keys.get(i));
				if (configured != null) {
					log.error(
							"Atlas rules of service '{}': {}; it gets the rules in force for {} until the "
									+ "configuration is fixed",
							serviceId, Reload.describe(ex), propertyPrefix(keys.get(i)));
					return configured;
				}
			}
			ServiceSettings global = Objects.requireNonNull(this.resolved.get(""), "global settings");
			log.error("Atlas rules of service '{}': {}; it gets the global rules in force until the configuration is "
					+ "fixed", serviceId, Reload.describe(ex));
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
	 * A caller-level section as it is in force.
	 * @param section a registered caller-level section
	 * @param <C> its properties class
	 * @return do not modify
	 * @throws IllegalArgumentException if the section is not registered
	 */
	public <C> C caller(CallerSection<C> section) {
		return this.caller.get(section);
	}

	/**
	 * A caller-level section as it was at startup, for switches read only then.
	 * @param section a registered caller-level section
	 * @param <C> its properties class
	 * @return do not modify
	 * @throws IllegalArgumentException if the section is not registered
	 */
	public <C> C atStartup(CallerSection<C> section) {
		return this.atStartup.get(section);
	}

	/**
	 * The per-service sections, in order.
	 * @return never {@code null}
	 */
	public List<Section<?, ?>> sections() {
		return this.sections;
	}

	/**
	 * The names a service's section can have under {@code atlas.services.<service-id>}.
	 * @return e.g. {@code [loadbalancer, gray, warmup]}, in order
	 */
	public List<String> sectionNames() {
		return this.sections.stream().map(Section::name).toList();
	}

	/**
	 * Properties (or prefixes) read only at startup: a runtime change of one needs a
	 * restart.
	 * @return full names, e.g. {@code atlas.enabled}
	 */
	public List<String> restartOnly() {
		List<String> names = new ArrayList<>(RESTART_ONLY);
		this.callerSections.forEach((section) -> names.addAll(section.restartOnly()));
		return names;
	}

	/**
	 * Adds a check that the settings of a service must pass beyond what binding checks
	 * (e.g. the strategy is registered): run at once for the global settings and every
	 * configured service (startup), on every runtime change before it is put in force,
	 * and for a service resolved for the first time after a runtime change (one that
	 * fails gets the settings in force of its key, else the global ones, with one ERROR).
	 * @param check given where the service's settings are written (e.g.
	 * {@code atlas.services.user-service}, or {@code atlas}) and the settings; throws
	 * {@link IllegalArgumentException} naming the property when they are invalid
	 * @throws IllegalArgumentException when the settings in force fail it
	 */
	public void addCheck(BiConsumer<String, ServiceSettings> check) {
		Objects.requireNonNull(check, "check");
		check.accept(AtlasSettings.PREFIX, settingsFor(""));
		this.caller.configuredServiceIds()
			.forEach((serviceId) -> check.accept(propertyPrefix(serviceId), settingsFor(serviceId)));
		this.checks.add(check);
	}

	/**
	 * Runs every added check.
	 * @param prefix where the service's settings are written, e.g.
	 * {@code atlas.services.user-service}
	 * @param settings the settings
	 * @throws IllegalArgumentException naming the property when they are invalid
	 */
	public void check(String prefix, ServiceSettings settings) {
		for (BiConsumer<String, ServiceSettings> check : this.checks) {
			check.accept(prefix, settings);
		}
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
		return (key != null) ? propertyPrefix(key) : AtlasSettings.PREFIX;
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
	 * Whether the environment gives a value, a list or a map at a property name now (not
	 * for the request path: binds from the environment).
	 * @param name a property name in its canonical form, e.g.
	 * {@code atlas.outlier.max-ejection-percent}
	 * @return {@code false} also when the name is not a valid property name
	 */
	public boolean isSet(String name) {
		if (!ConfigurationPropertyName.isValid(name)) {
			return false;
		}
		try {
			return this.binders.get().bind(name, Bindable.of(Object.class)).isBound();
		}
		catch (RuntimeException ex) {
			// a value that cannot even be bound as an Object is still a value
			return true;
		}
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
		Map<String, Reload.Outcome> outcomes = new LinkedHashMap<>();
		Set<String> ids = new LinkedHashSet<>();
		ids.add("");
		ids.addAll(this.resolved.keySet());
		CallerSettings fresh;
		try {
			fresh = CallerSettings.bind(this.binders.get(), this.callerSections, this.atStartup);
		}
		catch (RuntimeException ex) {
			ids.forEach((id) -> outcomes.put(id, new Reload.Outcome(previous(id), null, ex)));
			return new Reload(null, outcomes);
		}
		ids.addAll(fresh.configuredServiceIds());
		for (String id : ids) {
			ServiceSettings previous = previous(id);
			try {
				outcomes.put(id, new Reload.Outcome(previous, resolve(fresh, id), null));
			}
			catch (RuntimeException ex) {
				outcomes.put(id, new Reload.Outcome(previous, null, ex));
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
	 * Puts the caller-level settings of a reload in force (the caller-level sections, the
	 * configured keys), for services resolved from now on; each service's own settings
	 * are put in force by {@link #accept}.
	 * @param reload a reload whose caller-level settings are valid
	 */
	public void acceptCaller(Reload reload) {
		CallerSettings fresh = reload.caller();
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

	private ServiceSettings resolve(CallerSettings caller, String serviceId) {
		ServiceOverlay overlay = new ServiceOverlay(caller.binder());
		List<String> keys = ServiceOverlay.keysFor(caller.configuredServiceIds(), serviceId);
		SectionContext context = new Context(serviceId, caller, this.atStartup);
		Map<Section<?, ?>, Object> rules = new LinkedHashMap<>();
		for (Section<?, ?> section : this.sections) {
			rules.put(section, rulesOf(section, overlay, keys, context));
		}
		return new ServiceSettings(rules);
	}

	private static <P, R> R rulesOf(Section<P, R> section, ServiceOverlay overlay, List<String> keys,
			SectionContext context) {
		return section.rules(overlay.bind(section, keys), context);
	}

	private record Context(String serviceId, CallerSettings caller, CallerSettings startup) implements SectionContext {

		@Override
		public String propertyName(String path) {
			return ServiceOverlay.propertyName(this.serviceId, path);
		}

		@Override
		public <C> C caller(CallerSection<C> section) {
			return this.caller.get(section);
		}

		@Override
		public <C> C atStartup(CallerSection<C> section) {
			return this.startup.get(section);
		}

	}

}
