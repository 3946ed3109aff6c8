package dev.atlas.autoconfigure;

import java.util.Locale;

import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The choice among candidate instances, {@code atlas.loadbalancer.*}; per service under
 * {@code atlas.services.<serviceId>.loadbalancer.*}. (Atlas's own section, not Spring
 * Cloud's {@code spring.cloud.loadbalancer} properties.) Mutable while being bound, not
 * thread-safe.
 */
@ConfigurationProperties(prefix = LoadBalancerProperties.PREFIX)
public class LoadBalancerProperties {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasProperties.PREFIX + ".loadbalancer";

	/** The strategy of a service that names none. */
	public static final String DEFAULT_STRATEGY = "weighted-random";

	/**
	 * Name of the load-balancing strategy: weighted-random (default; O(1) per pick),
	 * smooth-round-robin (nginx's smooth weighted round robin), or the name of a strategy
	 * the application registers. Both built-in ones honour registry weights; weight 0
	 * means drained. Read trimmed and lower-cased, with _ as - (SMOOTH_ROUND_ROBIN is
	 * smooth-round-robin); blank means the default. An unknown name fails startup.
	 */
	private String strategy = DEFAULT_STRATEGY;

	/**
	 * What to do when every candidate has weight 0: fail-open (default; treat them as
	 * equal weights, log one WARN, count in atlas.weights.all.zero) or reject (no
	 * instance: the caller gets a NoInstanceAvailableException, counted in
	 * atlas.weights.all.zero).
	 */
	private AllZeroWeightsPolicy allZeroWeights = AllZeroWeightsPolicy.FAIL_OPEN;

	/**
	 * The strategy name, normalized.
	 * @return kebab-case, lower-case, never blank
	 */
	public String getStrategy() {
		return this.strategy;
	}

	/**
	 * Sets the strategy name; it is normalized ({@link #normalizeStrategy(String)}), not
	 * checked: strategies are registered by name elsewhere.
	 * @param strategy a name; {@code null} or blank leaves the value as it is (the
	 * default, or under {@code atlas.services.<service-id>} the global value)
	 */
	public void setStrategy(@Nullable String strategy) {
		if (strategy != null && !strategy.isBlank()) {
			this.strategy = normalizeStrategy(strategy);
		}
	}

	public AllZeroWeightsPolicy getAllZeroWeights() {
		return this.allZeroWeights;
	}

	public void setAllZeroWeights(AllZeroWeightsPolicy allZeroWeights) {
		this.allZeroWeights = allZeroWeights;
	}

	/**
	 * The canonical spelling of a strategy name, as configured names are compared with
	 * registered ones: trimmed, lower-cased ({@link Locale#ROOT}), {@code _} read as
	 * {@code -}.
	 * @param name a name as written, may be {@code null}
	 * @return e.g. {@code smooth-round-robin} for {@code " SMOOTH_ROUND_ROBIN"};
	 * {@link #DEFAULT_STRATEGY} for {@code null} or blank
	 */
	public static String normalizeStrategy(@Nullable String name) {
		if (name == null || name.isBlank()) {
			return DEFAULT_STRATEGY;
		}
		return name.trim().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
