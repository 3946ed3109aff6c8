package dev.atlas.autoconfigure;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import dev.atlas.autoconfigure.ServiceOverlay.Section;
import dev.atlas.loadbalancer.routing.AffinityRules;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
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
 * result is cached per service id: later changes of the environment are not seen. Every
 * service configured under {@code atlas.services} (or under the deprecated
 * {@code atlas.gray.weights}) is resolved at startup, so an invalid value fails startup
 * with a message naming the property.
 *
 * <p>
 * Thread-safe.
 */
public class AtlasSettings {

	private static final Section<LoadBalancerProperties> LOADBALANCER = new Section<>("loadbalancer",
			LoadBalancerProperties::new);

	private static final Section<ServiceGrayProperties> GRAY = new Section<>("gray", ServiceGrayProperties::new,
			Set.of(ServiceGrayProperties.WEIGHTS));

	private static final Section<WarmupProperties> WARMUP = new Section<>("warmup", WarmupProperties::new);

	private static final Section<OutlierProperties> OUTLIER = new Section<>("outlier", OutlierProperties::new);

	private final ServiceOverlay overlay;

	private final AtlasProperties atlas;

	private final GrayProperties gray;

	private final AffinityProperties affinity;

	private final ConcurrentMap<String, ServiceSettings> resolved = new ConcurrentHashMap<>();

	/**
	 * Creates the settings and resolves every configured service.
	 * @param environment where {@code atlas.*} is read from
	 * @param atlas the root properties (gives the configured service ids); not
	 * {@code null}
	 * @param gray the caller-level gray settings
	 * @param affinity the caller's affinity settings
	 * @throws IllegalArgumentException or
	 * {@link org.springframework.boot.context.properties.bind.BindException} naming the
	 * property when a configured service has an invalid value
	 */
	public AtlasSettings(ConfigurableEnvironment environment, AtlasProperties atlas, GrayProperties gray,
			AffinityProperties affinity) {
		this(new Binder(ConfigurationPropertySources.get(environment),
				new PropertySourcesPlaceholdersResolver(environment), AtlasValueConverters.conversionService()), atlas,
				gray, affinity);
	}

	AtlasSettings(Binder binder, AtlasProperties atlas, GrayProperties gray, AffinityProperties affinity) {
		this.overlay = new ServiceOverlay(binder);
		this.atlas = atlas;
		this.gray = gray;
		this.affinity = affinity;
		settingsFor("");
		configuredServiceIds().forEach(this::settingsFor);
	}

	/**
	 * The settings of calls to one service: its overrides under every key of
	 * {@code atlas.services} that {@link #matches(String, String) matches} its id (the
	 * key spelled exactly as the id last, so it wins), else the global values. Resolved
	 * on first use and cached per id as given.
	 * @param serviceId the service id; empty for the global values (no service in
	 * particular)
	 * @return the same object for the same id
	 * @throws IllegalArgumentException or
	 * {@link org.springframework.boot.context.properties.bind.BindException} naming the
	 * property when a value of this service is invalid
	 */
	public ServiceSettings settingsFor(String serviceId) {
		Objects.requireNonNull(serviceId, "serviceId");
		return this.resolved.computeIfAbsent(serviceId, this::resolve);
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
		return this.affinity.toRules(defaultCluster);
	}

	/**
	 * The services with settings of their own: under {@code atlas.services}, or with
	 * canary weights under the deprecated {@code atlas.gray.weights}.
	 * @return service ids, in configuration order
	 */
	public Set<String> configuredServiceIds() {
		Set<String> ids = new LinkedHashSet<>(this.atlas.getServices().keySet());
		ids.addAll(this.gray.deprecatedWeightsServiceIds());
		return ids;
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
	 * @return e.g. {@code atlas.services.user-service},
	 * {@code atlas.services[user.service]} or (deprecated canary weights only)
	 * {@code atlas.gray.weights.user-service}
	 */
	public String propertyPrefix(String key) {
		if (!this.atlas.getServices().containsKey(key) && this.gray.deprecatedWeightsServiceIds().contains(key)) {
			return GrayProperties.PREFIX + "." + ServiceGrayProperties.WEIGHTS + "." + key;
		}
		String name = ServiceOverlay.propertyName(key, "x");
		return name.substring(0, name.length() - 2);
	}

	private ServiceSettings resolve(String serviceId) {
		List<String> keys = ServiceOverlay.keysFor(this.atlas.getServices().keySet(), serviceId);
		LoadBalancerProperties loadbalancer = this.overlay.bind(LOADBALANCER, keys);
		String loadbalancerPrefix = ServiceOverlay.propertyName(serviceId, LOADBALANCER.name());
		ServiceGrayProperties lanes = this.overlay.bind(GRAY, keys);
		WarmupProperties warmup = this.overlay.bind(WARMUP, keys);
		OutlierProperties outlier = this.overlay.bind(OUTLIER, keys);
		return new ServiceSettings(loadbalancer.getStrategy(), loadbalancer.getAllZeroWeights(), this.gray.isEnabled(),
				this.gray.rulesFor(serviceId, lanes),
				warmup.toRules(ServiceOverlay.propertyName(serviceId, WARMUP.name())),
				outlier.toRules(ServiceOverlay.propertyName(serviceId, OUTLIER.name())),
				loadbalancer.leastRequestRules(loadbalancerPrefix), loadbalancer.peakEwmaRules(loadbalancerPrefix),
				loadbalancer.hashRules(loadbalancerPrefix));
	}

}
