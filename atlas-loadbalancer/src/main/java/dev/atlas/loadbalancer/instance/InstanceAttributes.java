package dev.atlas.loadbalancer.instance;

import org.jspecify.annotations.Nullable;

/**
 * The routing-relevant attributes of one {@code ServiceInstance}, parsed once per
 * instance-list snapshot by {@link InstanceAttributesParser} and never re-read on the
 * request path.
 *
 * <p>
 * Immutable and therefore thread-safe.
 *
 * @param weight configured weight, a finite number {@code >= 0}; {@code 0} means drained
 * (receives no traffic while any instance has a positive weight); relative, so {@code 1}
 * and {@code 6} give a 1:6 split
 * @param cluster cluster or zone, lower-cased with {@link java.util.Locale#ROOT} so that
 * comparisons are case-insensitive; {@code null} when the instance carries none
 * @param tag gray tag, lower-cased (e.g. {@code v2}); {@code null} for an untagged
 * (baseline) instance, never blank
 * @param registeredAtMillis registration time in epoch milliseconds as written by Atlas
 * at registration, or {@link #UNKNOWN_REGISTRATION_TIME} when the instance does not carry
 * it
 * @param healthy {@code false} only when the registry says so explicitly (e.g.
 * {@code nacos.healthy=false})
 * @since 0.1.0
 */
public record InstanceAttributes(double weight, @Nullable String cluster, @Nullable String tag, long registeredAtMillis,
		boolean healthy) {

	/**
	 * Value of {@link #registeredAtMillis()} when the instance does not carry a
	 * registration time.
	 */
	public static final long UNKNOWN_REGISTRATION_TIME = -1L;

	/**
	 * The attributes of an instance without any metadata: weight 1, no cluster, untagged,
	 * healthy.
	 */
	public static final InstanceAttributes DEFAULTS = new InstanceAttributes(1.0, null, null, UNKNOWN_REGISTRATION_TIME,
			true);

	/**
	 * Validates the components.
	 * @throws IllegalArgumentException if {@code weight} is negative, NaN or infinite
	 */
	public InstanceAttributes {
		if (!(weight >= 0) || Double.isInfinite(weight)) {
			throw new IllegalArgumentException("weight must be a finite number >= 0, was " + weight);
		}
	}

	/**
	 * Whether the instance is drained by its weight.
	 * @return {@code true} when {@link #weight()} is {@code 0}
	 */
	public boolean drained() {
		return this.weight == 0.0;
	}

}
