package dev.atlas.loadbalancer.weighting;

import java.time.Duration;
import java.util.Objects;

/**
 * Slow-start parameters, as in Envoy's slow start mode: during {@code duration} after an
 * instance appears, its effective weight is
 * {@code weight × max(minWeightPercent / 100, (age / duration)^(1 / aggression))}.
 *
 * @param duration length of the ramp; {@link Duration#ZERO} turns warmup off; not
 * negative
 * @param aggression shape of the ramp, {@code > 0}: 1.0 is linear, larger values ramp
 * faster early
 * @param minWeightPercent floor of the factor in percent (0..100), so a new instance is
 * never starved
 * @since 0.1.0
 */
public record WarmupRules(Duration duration, double aggression, double minWeightPercent) {

	/** Envoy's defaults over 60 s: linear ramp (aggression 1.0) from 10 %. */
	public static final WarmupRules DEFAULTS = new WarmupRules(Duration.ofSeconds(60), 1.0, 10);

	/** No warmup. */
	public static final WarmupRules OFF = new WarmupRules(Duration.ZERO, 1.0, 10);

	/**
	 * Validates.
	 * @throws IllegalArgumentException if a value is out of range
	 */
	public WarmupRules {
		Objects.requireNonNull(duration, "duration");
		if (duration.isNegative()) {
			throw new IllegalArgumentException("duration must not be negative, was " + duration);
		}
		if (!(aggression > 0) || Double.isInfinite(aggression)) {
			throw new IllegalArgumentException("aggression must be a number > 0, was " + aggression);
		}
		if (!(minWeightPercent >= 0 && minWeightPercent <= 100)) {
			throw new IllegalArgumentException("min-weight-percent must be between 0 and 100, was " + minWeightPercent);
		}
	}

	/**
	 * Whether warmup is on.
	 * @return {@code true} when the duration is positive
	 */
	public boolean enabled() {
		return !this.duration.isZero();
	}

	/**
	 * The weight factor of an instance of a given age, quantized up to whole percent (so
	 * that a smooth round robin period stays short).
	 * @param ageMillis age in ms; negative counts as 0
	 * @return a factor in (0, 1]; 1 once the age reaches the duration
	 */
	public double factor(long ageMillis) {
		long durationMillis = this.duration.toMillis();
		if (durationMillis == 0 || ageMillis >= durationMillis) {
			return 1.0;
		}
		double progress = Math.max(0, ageMillis) / (double) durationMillis;
		double factor = Math.max(this.minWeightPercent / 100.0, Math.pow(progress, 1.0 / this.aggression));
		return Math.min(1.0, Math.max(0.01, Math.ceil(factor * 100 - 1e-9) / 100.0));
	}

}
