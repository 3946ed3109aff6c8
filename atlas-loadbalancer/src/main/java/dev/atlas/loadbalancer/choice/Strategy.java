package dev.atlas.loadbalancer.choice;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.support.PropertyValues;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The load-balancing algorithms Atlas offers. Every strategy honours weights (weight 0 =
 * drained).
 */
public enum Strategy {

	/**
	 * Weighted random choice in O(1) per pick from an alias table (Vose's alias method)
	 * built once per instance-list snapshot. Stateless between picks, so callers never
	 * synchronize on each other. The default.
	 */
	WEIGHTED_RANDOM("weighted-random"),

	/**
	 * Smooth weighted round robin as in nginx ({@code ngx_http_upstream_get_peer}):
	 * weights 5, 1, 1 give {@code a a b a c a a}; every Σw consecutive picks contain each
	 * instance exactly w times. The sequence is precomputed per snapshot and shared by
	 * concurrent callers through one atomic counter.
	 */
	SMOOTH_ROUND_ROBIN("smooth-round-robin");

	private final String value;

	Strategy(String value) {
		this.value = value;
	}

	/**
	 * The property value of this strategy.
	 * @return e.g. {@code weighted-random}
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Parses a property value, ignoring case and treating {@code _} like {@code -}.
	 * @param value e.g. {@code smooth-round-robin}
	 * @return the strategy, never {@code null}
	 * @throws IllegalArgumentException naming the allowed values if {@code value} is none
	 * of them
	 */
	public static Strategy fromValue(String value) {
		return PropertyValues.parse(value, values(), Strategy::value, "load-balancing strategy");
	}

	/**
	 * Creates a balancer of this strategy with production defaults (thread-local
	 * randomness, random starting position).
	 * @param serviceId not {@code null}
	 * @param parser not {@code null}
	 * @param allZeroWeightsPolicy not {@code null}
	 * @param meterRegistry not {@code null}
	 * @return a new balancer, never {@code null}
	 */
	public Balancer newBalancer(String serviceId, InstanceAttributesParser parser,
			AllZeroWeightsPolicy allZeroWeightsPolicy, MeterRegistry meterRegistry) {
		return switch (this) {
			case WEIGHTED_RANDOM -> new WeightedRandomBalancer(serviceId, parser, allZeroWeightsPolicy, meterRegistry);
			case SMOOTH_ROUND_ROBIN ->
				new SmoothWeightedRoundRobinBalancer(serviceId, parser, allZeroWeightsPolicy, meterRegistry);
		};
	}

	@Override
	public String toString() {
		return this.value;
	}

}
