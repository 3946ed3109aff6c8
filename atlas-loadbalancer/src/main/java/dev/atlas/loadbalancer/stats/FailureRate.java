package dev.atlas.loadbalancer.stats;

/**
 * One instance's recent failure rate, in 0..1 (0 below {@value #COUNTED_FROM}): an
 * exponentially weighted moving average of its attempts' outcomes (1 for a failure, 0 for
 * a success), each new outcome weighing {@value #ALPHA}, which decays towards 0 with the
 * time since the last outcome as {@code exp(-Δt / decay time)}, so that an instance
 * avoided for failing is tried again after a while (ingress-nginx's success-rate factor,
 * with Finagle's decay of the peak-EWMA; the decay time is the service's
 * {@code peak-ewma.decay-time}).
 *
 * <p>
 * A healthy instance costs a success no write (the rate stays exactly 0) and a read one
 * volatile load (no clock, no arithmetic). Thread-safe: the (rate, time) pair is an
 * immutable sample replaced as a whole under this object's monitor and read without a
 * lock; a sample is allocated only while the rate is above 0.
 */
final class FailureRate {

	/** Weight of the newest outcome: three failures in a row make the rate 0.58. */
	static final double ALPHA = 0.25;

	/**
	 * Rates below this read as 0: one failure among successes (0.25) is forgiven, two in
	 * a row (0.44) count; and an instance that failed every recent attempt reads 0 again
	 * after {@code ln(1 / 0.3) ≈ 1.2} decay times without being called (12 s by default),
	 * so that a caller whose other instances are idle tries it again then.
	 */
	static final double COUNTED_FROM = 0.3;

	/** Below this the stored rate is dropped (and a success is free again). */
	private static final double NEGLIGIBLE = 0.001;

	private static final Sample NONE = new Sample(0, 0);

	private volatile Sample sample = NONE;

	/**
	 * Adds an outcome.
	 * @param failed whether the attempt failed
	 * @param now the ticker's time of the outcome, in ns
	 * @param decayNanos the decay time in ns, {@code > 0}
	 */
	void record(boolean failed, long now, double decayNanos) {
		if (!failed && this.sample == NONE) {
			return;
		}
		synchronized (this) {
			double next = decayed(this.sample, now, decayNanos) * (1 - ALPHA) + (failed ? ALPHA : 0);
			this.sample = (next < NEGLIGIBLE) ? NONE : new Sample(next, now);
		}
	}

	/**
	 * Whether the rate is 0 without reading the clock.
	 * @return {@code true} when no failure is remembered
	 */
	boolean isZero() {
		return this.sample == NONE;
	}

	/**
	 * The rate decayed to a time, 0 below {@value #COUNTED_FROM}.
	 * @param now the ticker's time, in ns
	 * @param decayNanos the decay time in ns, {@code > 0}
	 * @return 0, or a ratio in [{@value #COUNTED_FROM}, 1]
	 */
	double rate(long now, double decayNanos) {
		double rate = decayed(this.sample, now, decayNanos);
		return (rate < COUNTED_FROM) ? 0 : rate;
	}

	private static double decayed(Sample sample, long now, double decayNanos) {
		if (sample == NONE) {
			return 0;
		}
		long elapsed = now - sample.at;
		return (elapsed <= 0) ? sample.rate : sample.rate * Math.exp(-elapsed / decayNanos);
	}

	/** A rate and when it was computed (ticker ns). */
	private record Sample(double rate, long at) {
	}

}
