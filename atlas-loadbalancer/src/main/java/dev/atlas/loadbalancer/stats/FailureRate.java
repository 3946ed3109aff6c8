package dev.atlas.loadbalancer.stats;

/**
 * One instance's recent failure rate, in 0..1: an exponentially weighted moving average
 * of its attempts' outcomes (1 for a failure, 0 for a success), each new outcome weighing
 * {@value #ALPHA}, which decays towards 0 with the time since the last outcome as
 * {@code exp(-Δt / decay time)}, so that an instance avoided for failing is tried again
 * after a while (ingress-nginx's success-rate factor, with Finagle's decay of the
 * peak-EWMA; the decay time is the service's {@code peak-ewma.decay-time}).
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

	/** Below this the rate is 0 (and a success is free again). */
	private static final double NEGLIGIBLE = 0.001;

	private static final Sample NONE = new Sample(0, 0);

	private volatile Sample sample = NONE;

	/**
	 * Adds an outcome.
	 * @param failed whether the attempt failed
	 * @param now the ticker's time of the outcome, in ns
	 * @param decayNanos the decay time in ns, {@code > 0}
	 * @return {@code 1} when the rate left 0, {@code -1} when it returned to 0, else
	 * {@code 0}
	 */
	int record(boolean failed, long now, double decayNanos) {
		if (!failed && this.sample == NONE) {
			return 0;
		}
		synchronized (this) {
			Sample before = this.sample;
			double next = decayed(before, now, decayNanos) * (1 - ALPHA) + (failed ? ALPHA : 0);
			Sample after = (next < NEGLIGIBLE) ? NONE : new Sample(next, now);
			this.sample = after;
			return (before == NONE) ? ((after == NONE) ? 0 : 1) : ((after == NONE) ? -1 : 0);
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
	 * The rate decayed to a time.
	 * @param now the ticker's time, in ns
	 * @param decayNanos the decay time in ns, {@code > 0}
	 * @return a ratio in 0..1
	 */
	double rate(long now, double decayNanos) {
		return decayed(this.sample, now, decayNanos);
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
