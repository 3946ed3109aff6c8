package dev.atlas.loadbalancer.orca;

import java.time.Duration;

/**
 * How reported load becomes weights, with gRFC A58's defaults.
 *
 * @param blackoutPeriod how long an instance must have reported before its weight is
 * used, {@code >= 0} (A58: 10 s; avoids churn when instances come and go)
 * @param weightExpirationPeriod how long a weight is used after the instance's last
 * report, {@code > 0} (A58: 3 min)
 * @param weightUpdatePeriod how often weights are recomputed, {@code >= 100 ms} (A58: 1
 * s, not less than 100 ms)
 * @param errorUtilizationPenalty how much the error rate ({@code eps ÷ qps}) adds to the
 * utilization, {@code >= 0} (A58: 1.0)
 * @since 0.1.0
 */
public record WeightRules(Duration blackoutPeriod, Duration weightExpirationPeriod, Duration weightUpdatePeriod,
		double errorUtilizationPenalty) {

	/** The shortest update period (gRFC A58). */
	public static final Duration MIN_UPDATE_PERIOD = Duration.ofMillis(100);

	/** gRFC A58's defaults: 10 s, 3 min, 1 s, 1.0. */
	public static final WeightRules DEFAULTS = new WeightRules(Duration.ofSeconds(10), Duration.ofMinutes(3),
			Duration.ofSeconds(1), 1.0);

	/**
	 * Validates.
	 * @throws IllegalArgumentException naming the property ({@code blackout-period},
	 * {@code weight-expiration-period}, {@code weight-update-period},
	 * {@code error-utilization-penalty}) and the values allowed
	 */
	public WeightRules {
		if (blackoutPeriod == null || blackoutPeriod.isNegative()) {
			throw new IllegalArgumentException("blackout-period must be a duration >= 0, was " + blackoutPeriod);
		}
		if (weightExpirationPeriod == null || weightExpirationPeriod.isNegative() || weightExpirationPeriod.isZero()) {
			throw new IllegalArgumentException(
					"weight-expiration-period must be a duration > 0, was " + weightExpirationPeriod);
		}
		if (weightUpdatePeriod == null || weightUpdatePeriod.compareTo(MIN_UPDATE_PERIOD) < 0) {
			throw new IllegalArgumentException(
					"weight-update-period must be a duration >= 100ms, was " + weightUpdatePeriod);
		}
		if (!(errorUtilizationPenalty >= 0) || Double.isInfinite(errorUtilizationPenalty)) {
			throw new IllegalArgumentException(
					"error-utilization-penalty must be a finite number >= 0, was " + errorUtilizationPenalty);
		}
	}

}
