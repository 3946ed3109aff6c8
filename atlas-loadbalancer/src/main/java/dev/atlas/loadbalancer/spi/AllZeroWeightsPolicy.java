package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.support.PropertyValues;

/**
 * What a balancer does when candidates exist but every one of them has weight 0 (all
 * drained), which is nearly always an operator mistake rather than an intended outage.
 *
 * @since 0.1.0
 */
public enum AllZeroWeightsPolicy {

	/**
	 * Treat every candidate as weight 1: traffic keeps flowing, one WARN per snapshot is
	 * logged and the {@code atlas.weights.all.zero} counter counts each such request. The
	 * default.
	 */
	FAIL_OPEN("fail-open"),

	/**
	 * Choose nothing: the request gets an empty response (with Atlas's
	 * auto-configuration, a {@code NoInstanceAvailableException} for every HTTP client)
	 * and the {@code atlas.weights.all.zero} counter counts it.
	 */
	REJECT("reject");

	private final String value;

	AllZeroWeightsPolicy(String value) {
		this.value = value;
	}

	/**
	 * The property value of this policy.
	 * @return e.g. {@code fail-open}
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Parses a property value, ignoring case and treating {@code _} like {@code -}.
	 * @param value e.g. {@code fail-open}
	 * @return the policy
	 * @throws IllegalArgumentException naming the allowed values if {@code value} is none
	 * of them
	 */
	public static AllZeroWeightsPolicy fromValue(String value) {
		return PropertyValues.parse(value, values(), AllZeroWeightsPolicy::value, "all-zero-weights policy");
	}

	@Override
	public String toString() {
		return this.value;
	}

}
