package dev.atlas.autoconfigure.loadbalancer;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.AtlasProperties;
import dev.atlas.autoconfigure.AtlasSettings;
import dev.atlas.autoconfigure.GrayProperties;
import dev.atlas.autoconfigure.LifecycleProperties;
import dev.atlas.autoconfigure.RegistryProperties;
import dev.atlas.autoconfigure.ServiceSettings;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.weighting.WarmupRules;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.context.annotation.Bean;
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
			Set<String> ownBalancers) {
		ServiceSettings defaults = settings.settingsFor("");
		GrayRules gray = defaults.gray();
		WarmupRules warmup = defaults.warmup();
		StringBuilder line = new StringBuilder("Atlas is the load balancer of every @LoadBalanced client");
		if (!ownBalancers.isEmpty()) {
			line.append(" except ")
				.append(String.join(", ", ownBalancers))
				.append(" (the application's own balancer; Atlas does not route ")
				.append((ownBalancers.size() == 1) ? "it" : "them")
				.append(")");
		}
		line.append(": strategy=")
			.append(defaults.strategy())
			.append(", all-zero-weights=")
			.append(defaults.allZeroWeights());
		line.append("; gray=")
			.append(grayProperties.isEnabled() ? "on (header " + gray.header() + ", fallback " + gray.fallback()
					+ ((gray.ownTag() != null) ? ", own tag " + gray.ownTag() : "") + ")" : "off");
		line.append("; affinity=").append(callerCluster.describe());
		line.append("; warmup=").append(warmup.enabled() ? warmup.duration().toSeconds() + "s" : "off");
		line.append("; register-when-ready=").append(lifecycle.isRegisterWhenReady());
		line.append("; graceful-shutdown=")
			.append(lifecycle.isGracefulShutdown() ? "drain " + lifecycle.getDrain().toMillis() + "ms" : "off");
		line.append("; refresh-on-events=").append(registry.isRefreshOnEvents());
		String overrides = atlas.getServices()
			.keySet()
			.stream()
			.map((serviceId) -> serviceId + "=" + settings.settingsFor(serviceId).strategy())
			.collect(Collectors.joining(", "));
		if (!overrides.isEmpty()) {
			line.append("; per-service strategies: ").append(overrides);
		}
		return line.toString();
	}

	/**
	 * The services whose {@code @LoadBalancerClient} configuration declares a balancer (a
	 * {@code @Bean} method returning a {@link ReactiveLoadBalancer}); Atlas steps aside
	 * for them. Read from the configuration classes, before any context of a service
	 * exists; {@link ServiceFirstUse} confirms it at the first call of each.
	 * @param specifications the {@code @LoadBalancerClient} registrations
	 * @return service ids, sorted
	 */
	static Set<String> ownBalancers(Iterable<LoadBalancerClientSpecification> specifications) {
		Set<String> services = new TreeSet<>();
		for (LoadBalancerClientSpecification specification : specifications) {
			String name = specification.getName();
			if (name == null || name.startsWith("default.")) {
				continue;
			}
			for (Class<?> configuration : specification.getConfiguration()) {
				for (Method method : ReflectionUtils.getUniqueDeclaredMethods(configuration)) {
					if (method.isAnnotationPresent(Bean.class)
							&& ReactiveLoadBalancer.class.isAssignableFrom(method.getReturnType())) {
						services.add(name);
					}
				}
			}
		}
		return services;
	}

	static List<String> conflicts(LifecycleProperties lifecycle, RegistryProperties registry, Environment environment) {
		List<String> warnings = new ArrayList<>();
		if ("weighted".equals(environment.getProperty(SPRING_CONFIGURATIONS))) {
			warnings.add(SPRING_CONFIGURATIONS + "=weighted repeats every instance by its weight before Atlas, which "
					+ "honours weights itself: weights would count twice. Remove that property.");
		}
		Duration ttl = ttl(environment);
		Duration drain = lifecycle.getDrain();
		boolean eventsOnChange = registry.isRefreshOnEvents() && !nacosDiscoveryOn(environment);
		if (lifecycle.isGracefulShutdown() && !eventsOnChange && ttl.compareTo(drain) > 0) {
			warnings.add("spring.cloud.loadbalancer.cache.ttl (" + ttl.toMillis() + " ms) is longer than "
					+ "atlas.lifecycle.drain (" + drain.toMillis()
					+ " ms) and this registry does not refresh callers on "
					+ "change: callers may still call a stopped instance. Lower the TTL or raise the drain.");
		}
		return warnings;
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

	private static boolean nacosDiscoveryOn(Environment environment) {
		return ClassUtils.isPresent("com.alibaba.cloud.nacos.discovery.NacosDiscoveryClient", null)
				&& environment.getProperty("spring.cloud.nacos.discovery.enabled", Boolean.class, true);
	}

}
