package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.AtlasProperties;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.weighting.WarmupRules;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The startup diagnostics: one INFO line with the features in force (and per-service
 * overrides), and one WARN per configuration conflict found.
 */
final class StartupReport {

	private static final String SPRING_CONFIGURATIONS = "spring.cloud.loadbalancer.configurations";

	private StartupReport() {
	}

	static String features(AtlasProperties properties, Environment environment) {
		AtlasProperties.ResolvedLoadBalancer defaults = properties.resolve("");
		GrayRules gray = properties.resolveGray("");
		AffinityRules affinity = properties.resolveAffinity(defaultCluster(environment));
		WarmupRules warmup = properties.resolveWarmup();
		AtlasProperties.Lifecycle lifecycle = properties.getLifecycle();
		StringBuilder line = new StringBuilder("Atlas is the load balancer of every @LoadBalanced client: strategy=")
			.append(defaults.strategy())
			.append(", all-zero-weights=")
			.append(defaults.allZeroWeights());
		line.append("; gray=")
			.append(properties.getGray().isEnabled() ? "on (header " + gray.header() + ", fallback " + gray.fallback()
					+ ((gray.ownTag() != null) ? ", own tag " + gray.ownTag() : "") + ")" : "off");
		line.append("; affinity=")
			.append((affinity.cluster() != null) ? "cluster '" + affinity.cluster() + "'" : "off (no cluster)");
		line.append("; warmup=").append(warmup.enabled() ? warmup.duration().toSeconds() + "s" : "off");
		line.append("; register-when-ready=").append(lifecycle.isRegisterWhenReady());
		line.append("; graceful-shutdown=")
			.append(lifecycle.isGracefulShutdown() ? "drain " + lifecycle.getDrain().toMillis() + "ms" : "off");
		line.append("; refresh-on-events=").append(properties.getRegistry().isRefreshOnEvents());
		String overrides = properties.getServices()
			.keySet()
			.stream()
			.map((serviceId) -> serviceId + "=" + properties.resolve(serviceId).strategy())
			.collect(Collectors.joining(", "));
		if (!overrides.isEmpty()) {
			line.append("; per-service strategies: ").append(overrides);
		}
		return line.toString();
	}

	static List<String> conflicts(AtlasProperties properties, Environment environment) {
		List<String> warnings = new ArrayList<>();
		if ("weighted".equals(environment.getProperty(SPRING_CONFIGURATIONS))) {
			warnings.add(SPRING_CONFIGURATIONS + "=weighted repeats every instance by its weight before Atlas, which "
					+ "honours weights itself: weights would count twice. Remove that property.");
		}
		Duration ttl = ttl(environment);
		Duration drain = properties.getLifecycle().getDrain();
		boolean eventsOnChange = properties.getRegistry().isRefreshOnEvents() && !nacosDiscoveryOn(environment);
		if (properties.getLifecycle().isGracefulShutdown() && !eventsOnChange && ttl.compareTo(drain) > 0) {
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

	private static String defaultCluster(Environment environment) {
		return environment.getProperty("spring.cloud.nacos.discovery.cluster-name",
				environment.getProperty("spring.cloud.loadbalancer.zone"));
	}

}
