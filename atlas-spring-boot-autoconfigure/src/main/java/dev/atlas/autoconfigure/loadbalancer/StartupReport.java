package dev.atlas.autoconfigure.loadbalancer;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.affinity.CallerCluster;
import dev.atlas.autoconfigure.gray.GrayProperties;
import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.lifecycle.LifecycleProperties;
import dev.atlas.autoconfigure.outlier.OutlierSection;
import dev.atlas.autoconfigure.registry.InstanceChangeSource;
import dev.atlas.autoconfigure.registry.RegistryProperties;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.autoconfigure.warmup.WarmupSection;
import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.weighting.WarmupRules;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.ImportSelector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The startup diagnostics: one INFO line with the features in force (and per-service
 * overrides), and one WARN per configuration conflict found.
 */
final class StartupReport {

	private static final String SPRING_CONFIGURATIONS = "spring.cloud.loadbalancer.configurations";

	private StartupReport() {
	}

	static String features(AtlasSettings settings, AtlasProperties atlas, GrayProperties grayProperties,
			LifecycleProperties lifecycle, RegistryProperties registry, CallerCluster callerCluster,
			OwnBalancers balancers) {
		ServiceSettings defaults = settings.settingsFor("");
		StrategyRules choice = defaults.get(StrategyRules.SECTION);
		GrayRules gray = defaults.get(GraySettings.SECTION).gray();
		WarmupRules warmup = defaults.get(WarmupSection.SECTION);
		StringBuilder line = new StringBuilder("Atlas is the load balancer of every @LoadBalanced client");
		line.append(ownBalancersClause(balancers));
		line.append(": strategy=")
			.append(strategy(defaults))
			.append(", all-zero-weights=")
			.append(choice.allZeroWeights());
		line.append("; gray=")
			.append(grayProperties.isEnabled() ? "on (header " + gray.header() + ", fallback " + gray.fallback()
					+ ((gray.ownTag() != null) ? ", own tag " + gray.ownTag() : "")
					+ (gray.laneRules().isEmpty() ? "" : ", lane rules " + gray.laneRules()) + ")" : "off");
		line.append("; affinity=").append(callerCluster.describe());
		line.append("; warmup=").append(warmup.enabled() ? warmup.duration().toSeconds() + "s" : "off");
		OutlierRules outlier = defaults.get(OutlierSection.SECTION);
		line.append("; outlier=")
			.append(outlier.enabled() ? "on (" + outlier.consecutiveGatewayFailure() + " gateway failures or "
					+ outlier.consecutive5xx() + " 5xx in a row, base " + outlier.baseEjectionTime().toMillis()
					+ "ms, max " + outlier.maxEjectionPercent() + " %, panic below " + outlier.panicThresholdPercent()
					+ " %, probe " + outlier.probe().type() + ")" : "off");
		line.append("; register-when-ready=").append(lifecycle.isRegisterWhenReady());
		line.append("; graceful-shutdown=")
			.append(lifecycle.isGracefulShutdown() ? "drain " + lifecycle.getDrain().toMillis() + "ms" : "off");
		line.append("; refresh-on-events=").append(registry.isRefreshOnEvents());
		String overrides = atlas.getServices()
			.keySet()
			.stream()
			.map((serviceId) -> serviceId + "=" + strategy(settings.settingsFor(serviceId)))
			.collect(Collectors.joining(", "));
		if (!overrides.isEmpty()) {
			line.append("; per-service strategies: ").append(overrides);
		}
		return line.toString();
	}

	/** A strategy's name, with the key of {@code ring-hash}. */
	private static String strategy(ServiceSettings settings) {
		StrategyRules choice = settings.get(StrategyRules.SECTION);
		if (!RingHashBalancer.NAME.equals(choice.strategy())) {
			return choice.strategy();
		}
		HashRules hash = choice.hash();
		return choice.strategy() + " (key: " + ((hash.header() != null) ? "header " + hash.header() : "")
				+ ((hash.header() != null && hash.cookie() != null) ? ", else " : "")
				+ ((hash.cookie() != null) ? "cookie " + hash.cookie() : "")
				+ (hash.boundedLoad() ? "; bounded load " + hash.loadFactor() : "") + ")";
	}

	/**
	 * The services whose {@code @LoadBalancerClient} configuration declares a balancer (a
	 * {@code @Bean} method returning a {@link ReactiveLoadBalancer}); Atlas steps aside
	 * for them. Read from the configuration classes, before any context of a service
	 * exists: the classes themselves, their superclasses, their nested
	 * {@code @Configuration} classes and the classes they {@code @Import} (recursively).
	 * What an {@link ImportSelector} or {@link ImportBeanDefinitionRegistrar} adds, and
	 * whether a conditional {@code @Bean} is created, is not known then: such a service
	 * is in {@link OwnBalancers#unknown()}. {@link ServiceFirstUse} says what each
	 * service really uses at its first call.
	 * @param specifications the {@code @LoadBalancerClient} registrations
	 * @return service ids, sorted; never {@code null}
	 */
	static OwnBalancers ownBalancers(Iterable<LoadBalancerClientSpecification> specifications) {
		Set<String> own = new TreeSet<>();
		Set<String> unknown = new TreeSet<>();
		for (LoadBalancerClientSpecification specification : specifications) {
			String name = specification.getName();
			if (name == null || name.startsWith("default.")) {
				continue;
			}
			Set<Class<?>> seen = new HashSet<>();
			boolean[] uncertain = { false };
			boolean declares = false;
			for (Class<?> configuration : specification.getConfiguration()) {
				declares |= declaresBalancer(configuration, seen, uncertain);
			}
			if (declares) {
				own.add(name);
			}
			else if (uncertain[0]) {
				unknown.add(name);
			}
		}
		return new OwnBalancers(own, unknown);
	}

	private static boolean declaresBalancer(Class<?> configuration, Set<Class<?>> seen, boolean[] uncertain) {
		if (!seen.add(configuration)) {
			return false;
		}
		if (ImportSelector.class.isAssignableFrom(configuration)
				|| ImportBeanDefinitionRegistrar.class.isAssignableFrom(configuration)) {
			uncertain[0] = true;
			return false;
		}
		boolean declares = false;
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(configuration)) {
			if (method.isAnnotationPresent(Bean.class)
					&& ReactiveLoadBalancer.class.isAssignableFrom(method.getReturnType())) {
				if (AnnotatedElementUtils.isAnnotated(method, Conditional.class)) {
					uncertain[0] = true;
				}
				else {
					declares = true;
				}
			}
		}
		for (Class<?> imported : imports(configuration)) {
			declares |= declaresBalancer(imported, seen, uncertain);
		}
		for (Class<?> nested : configuration.getDeclaredClasses()) {
			if (AnnotatedElementUtils.isAnnotated(nested, Configuration.class)) {
				declares |= declaresBalancer(nested, seen, uncertain);
			}
		}
		return declares;
	}

	private static List<Class<?>> imports(Class<?> configuration) {
		return MergedAnnotations.from(configuration, SearchStrategy.TYPE_HIERARCHY)
			.stream(Import.class)
			.flatMap((annotation) -> Arrays.stream(annotation.getClassArray("value")))
			.toList();
	}

	/**
	 * The startup line's words on the application's own balancers.
	 * @param balancers what the configuration classes tell
	 * @return empty when there are none
	 */
	static String ownBalancersClause(OwnBalancers balancers) {
		StringBuilder clause = new StringBuilder();
		if (!balancers.own().isEmpty()) {
			clause.append(" except ")
				.append(String.join(", ", balancers.own()))
				.append(" (the application's own balancer; Atlas does not route ")
				.append((balancers.own().size() == 1) ? "it" : "them")
				.append(")");
		}
		if (!balancers.unknown().isEmpty()) {
			clause.append(balancers.own().isEmpty() ? " except perhaps " : ", perhaps ")
				.append(String.join(", ", balancers.unknown()))
				.append(" (the @LoadBalancerClient configuration may declare a balancer; the first call says)");
		}
		return clause.toString();
	}

	/**
	 * What the startup line can tell about the application's own balancers.
	 *
	 * @param own services whose configuration certainly declares a balancer, sorted
	 * @param unknown services whose configuration may declare one (a conditional
	 * {@code @Bean}, an import selector or registrar), sorted
	 */
	record OwnBalancers(Set<String> own, Set<String> unknown) {
	}

	/**
	 * Settings that work against each other, one WARN line each. A cache TTL longer than
	 * the drain is one unless registry events refresh callers: Spring Cloud's
	 * {@code HeartbeatEvent} does for ZooKeeper, Consul, Eureka and Kubernetes (on their
	 * own schedule); for Nacos only Atlas's {@link InstanceChangeSource} does.
	 * @param changeEvents whether an {@link InstanceChangeSource} is subscribed
	 * (ZooKeeper, Nacos)
	 */
	static List<String> conflicts(LifecycleProperties lifecycle, RegistryProperties registry, Environment environment,
			boolean changeEvents) {
		List<String> warnings = new ArrayList<>();
		if ("weighted".equals(environment.getProperty(SPRING_CONFIGURATIONS))) {
			warnings.add(SPRING_CONFIGURATIONS + "=weighted repeats every instance by its weight before Atlas, which "
					+ "honours weights itself: weights would count twice. Remove that property.");
		}
		Duration ttl = ttl(environment);
		Duration drain = lifecycle.getDrain();
		boolean eventsOnChange = registry.isRefreshOnEvents() && (changeEvents || !nacosDiscoveryOn(environment));
		if (lifecycle.isGracefulShutdown() && !eventsOnChange && ttl.compareTo(drain) > 0) {
			warnings.add("spring.cloud.loadbalancer.cache.ttl (" + ttl.toMillis() + " ms) is longer than "
					+ "atlas.lifecycle.drain (" + drain.toMillis()
					+ " ms) and this registry does not refresh callers on "
					+ "change: callers may still call a stopped instance. Lower the TTL or raise the drain.");
		}
		return warnings;
	}

	private static boolean nacosDiscoveryOn(Environment environment) {
		return ClassUtils.isPresent("com.alibaba.cloud.nacos.discovery.NacosDiscoveryClient", null)
				&& environment.getProperty("spring.cloud.nacos.discovery.enabled", Boolean.class, true);
	}

	private static Duration ttl(Environment environment) {
		String value = environment.getProperty("spring.cloud.loadbalancer.cache.ttl");
		try {
			return (value != null) ? DurationStyle.detectAndParse(value) : Duration.ofSeconds(35);
		}
		catch (IllegalArgumentException ex) {
			return Duration.ofSeconds(35);
		}
	}

}
