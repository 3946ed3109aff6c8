package dev.atlas.loadbalancer.outlier;

import java.time.Duration;
import java.util.Objects;

/**
 * Outlier detection parameters of one service, with Envoy's outlier detection as the
 * reference for their meaning and defaults.
 *
 * @param enabled whether failing instances are ejected at all
 * @param consecutive5xx ejects an instance after this many 5xx answers (and gateway
 * failures) in a row, {@code >= 0}; 0 turns this detector off. Envoy's default 5.
 * @param consecutiveGatewayFailure ejects an instance after this many gateway failures in
 * a row (connect refused or timed out, read timeout, 502, 503, 504), {@code >= 0}; 0
 * turns this detector off. Envoy's default 5.
 * @param baseEjectionTime an ejection lasts this long times the number of times the
 * instance was ejected; {@code > 0}. Envoy's default 30 s.
 * @param maxEjectionTime cap of one ejection, {@code >= baseEjectionTime}. Envoy's
 * default 300 s.
 * @param maxEjectionPercent at most this share of a service's instances is ejected at
 * once, in percent (0..100): a true limit, as in Envoy since 2023 (an ejection that would
 * go beyond it does not happen, so 0 ejects nothing). Atlas's default is 50, not Envoy's
 * 10: as a true limit, 10 would turn ejection off for every service of fewer than 10
 * instances; 50 lets one of two, one of three and two of four be ejected, and with the
 * panic threshold at 50 % no lane is left with less than half of its instances.
 * @param panicThresholdPercent when fewer than this share of a lane's instances (0..100)
 * would remain, ejection is ignored for that lane (panic mode); 0 never panics. Envoy's
 * default 50.
 * @param probe how an ejected instance is checked before it returns
 * @param interval how often success-rate and failure-percentage detection judge the
 * instances, over the requests of the interval, {@code >= 1ms}. Envoy's default 10 s.
 * @param successRate success-rate detection (an instance worse than its peers)
 * @param failurePercentage failure-percentage detection (an instance above a fixed share
 * of failures)
 * @since 0.1.0
 */
public record OutlierRules(boolean enabled, int consecutive5xx, int consecutiveGatewayFailure,
		Duration baseEjectionTime, Duration maxEjectionTime, double maxEjectionPercent, double panicThresholdPercent,
		ProbeRules probe, Duration interval, SuccessRateRules successRate, FailurePercentageRules failurePercentage) {

	/** Envoy's detection interval: 10 s. */
	public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

	/**
	 * Envoy's defaults (but at most 50 % ejected, see {@code maxEjectionPercent}), with a
	 * TCP probe every 5 s (1 s timeout).
	 */
	public static final OutlierRules DEFAULTS = new OutlierRules(true, 5, 5, Duration.ofSeconds(30),
			Duration.ofSeconds(300), 50, 50, ProbeRules.DEFAULTS);

	/** No outlier detection. */
	public static final OutlierRules OFF = new OutlierRules(false, 5, 5, Duration.ofSeconds(30),
			Duration.ofSeconds(300), 50, 50, ProbeRules.DEFAULTS);

	/**
	 * Rules with success-rate and failure-percentage detection at their defaults (off;
	 * every 10 s once turned on).
	 * @param enabled whether failing instances are ejected at all
	 * @param consecutive5xx see the canonical constructor
	 * @param consecutiveGatewayFailure see the canonical constructor
	 * @param baseEjectionTime see the canonical constructor
	 * @param maxEjectionTime see the canonical constructor
	 * @param maxEjectionPercent see the canonical constructor
	 * @param panicThresholdPercent see the canonical constructor
	 * @param probe see the canonical constructor
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public OutlierRules(boolean enabled, int consecutive5xx, int consecutiveGatewayFailure, Duration baseEjectionTime,
			Duration maxEjectionTime, double maxEjectionPercent, double panicThresholdPercent, ProbeRules probe) {
		this(enabled, consecutive5xx, consecutiveGatewayFailure, baseEjectionTime, maxEjectionTime, maxEjectionPercent,
				panicThresholdPercent, probe, DEFAULT_INTERVAL, SuccessRateRules.DEFAULTS,
				FailurePercentageRules.DEFAULTS);
	}

	/**
	 * Validates.
	 * @throws IllegalArgumentException naming the property (kebab-case, relative to the
	 * section) when a value is out of range
	 * @throws NullPointerException when a value is missing
	 */
	public OutlierRules {
		Objects.requireNonNull(baseEjectionTime, "base-ejection-time must be set: a duration of at least 1ms");
		Objects.requireNonNull(maxEjectionTime, "max-ejection-time must be set: a duration >= base-ejection-time");
		Objects.requireNonNull(probe, "probe must be set");
		Objects.requireNonNull(interval, "interval must be set: a duration of at least 1ms");
		Objects.requireNonNull(successRate, "success-rate must be set");
		Objects.requireNonNull(failurePercentage, "failure-percentage must be set");
		if (interval.isNegative() || interval.toMillis() < 1) {
			throw new IllegalArgumentException("interval must be at least 1ms, was " + interval);
		}
		if (consecutive5xx < 0) {
			throw new IllegalArgumentException("consecutive5xx must be >= 0 (0 turns it off), was " + consecutive5xx);
		}
		if (consecutiveGatewayFailure < 0) {
			throw new IllegalArgumentException(
					"consecutive-gateway-failure must be >= 0 (0 turns it off), was " + consecutiveGatewayFailure);
		}
		if (baseEjectionTime.isNegative() || baseEjectionTime.toMillis() < 1) {
			throw new IllegalArgumentException("base-ejection-time must be at least 1ms, was " + baseEjectionTime);
		}
		if (maxEjectionTime.compareTo(baseEjectionTime) < 0) {
			throw new IllegalArgumentException("max-ejection-time must be >= base-ejection-time (" + baseEjectionTime
					+ "), was " + maxEjectionTime);
		}
		if (!(maxEjectionPercent >= 0 && maxEjectionPercent <= 100)) {
			throw new IllegalArgumentException(
					"max-ejection-percent must be between 0 and 100, was " + maxEjectionPercent);
		}
		if (!(panicThresholdPercent >= 0 && panicThresholdPercent <= 100)) {
			throw new IllegalArgumentException(
					"panic-threshold-percent must be between 0 and 100, was " + panicThresholdPercent);
		}
	}

	/**
	 * Whether success-rate or failure-percentage detection is on: then every request's
	 * outcome is counted for the interval.
	 * @return {@code true} when either enforces
	 */
	public boolean judgesPeers() {
		return this.enabled && (this.successRate.enforcing() > 0 || this.failurePercentage.enforcing() > 0);
	}

	/**
	 * How long the n-th ejection lasts: {@code baseEjectionTime × n}, capped at
	 * {@code maxEjectionTime}.
	 * @param timesEjected {@code >= 1}, this ejection included
	 * @return ms, {@code > 0}
	 */
	public long ejectionMillis(int timesEjected) {
		long base = this.baseEjectionTime.toMillis();
		long max = this.maxEjectionTime.toMillis();
		return (timesEjected >= max / base + 1) ? max : Math.min(max, base * Math.max(1, timesEjected));
	}

	/**
	 * How many of a service's instances may be ejected at once:
	 * {@code floor(instances × maxEjectionPercent / 100)}, a true limit (Envoy's since
	 * 2023: 0 when even one ejection would exceed it).
	 * @param instances the service's instance count, {@code >= 0}
	 * @return {@code >= 0}
	 */
	public int maxEjected(int instances) {
		return (int) Math.floor(instances * this.maxEjectionPercent / 100.0 + 1e-9);
	}

	/**
	 * Whether a lane is in panic: fewer than {@code panicThresholdPercent} of its
	 * instances would remain.
	 * @param usable instances left after ejection, {@code >= 0}
	 * @param lane instances of the lane, {@code >= 1}
	 * @return {@code true} when ejection must be ignored for the lane
	 */
	public boolean panics(int usable, int lane) {
		return usable * 100.0 < this.panicThresholdPercent * lane - 1e-9;
	}

}
