package dev.atlas.loadbalancer.stats;

/**
 * One instance's peak-sensitive latency average, the one the {@code peak-ewma} strategy
 * ranks by (Finagle's {@code PeakEwma}, also Linkerd's): a response slower than the
 * current average replaces it; a faster one is blended in with weight
 * {@code 1 - exp(-Δt / decay time)}, Δt being the time since the previous sample; between
 * samples the average decays towards 0 as {@code exp(-Δt / decay time)}, so an instance
 * avoided for being slow is tried again after a while.
 *
 * <p>
 * The decay is computed when read, not written (Finagle writes it on every read), so
 * reads stay free of shared writes; a sample is compared with the average decayed to its
 * arrival, which is what Finagle does when a read precedes each sample (as its balancer's
 * reads do).
 *
 * <p>
 * Units: the average in milliseconds, times in nanoseconds of the statistics' ticker
 * (only compared with each other), the decay time in nanoseconds ({@code > 0}, given by
 * the caller on each call so that it can change at runtime). {@link Double#NaN} until the
 * first sample.
 *
 * <p>
 * Thread-safe: the (average, time) pair is written under this object's monitor between
 * two increments of a version and read without a lock, again when a write overlapped the
 * read (a sequence lock), so a read never pairs a value with another value's time and
 * neither side allocates.
 */
final class PeakEwma {

	/** Reads retried before a reader takes the writers' lock. */
	private static final int MAX_SPINS = 64;

	/** The average in ms at {@link #stamp}; NaN until the first sample. */
	private volatile double peak = Double.NaN;

	/** When {@link #peak} was written, in ticker ns. */
	private volatile long stamp;

	/** Odd while {@link #peak} and {@link #stamp} are being written. */
	private volatile int version;

	/**
	 * Adds a sample.
	 * @param millis a request's duration in ms, {@code >= 0}
	 * @param now the ticker's time of the sample, in ns
	 * @param decayNanos the decay time in ns, {@code > 0}
	 */
	synchronized void record(double millis, long now, double decayNanos) {
		double current = this.peak;
		double next;
		if (Double.isNaN(current)) {
			next = millis;
		}
		else {
			double decay = Math.exp(-Math.max(0, now - this.stamp) / decayNanos);
			double decayed = current * decay;
			next = (millis > decayed) ? millis : decayed + millis * (1 - decay);
		}
		this.version++;
		this.peak = next;
		this.stamp = now;
		this.version++;
	}

	/**
	 * The average decayed to a time.
	 * @param now the ticker's time to decay to, in ns
	 * @param decayNanos the decay time in ns, {@code > 0}
	 * @return ms, or {@link Double#NaN} before the first sample
	 */
	double millis(long now, double decayNanos) {
		double value;
		long at;
		int seen;
		int spins = 0;
		do {
			if (++spins > MAX_SPINS) {
				// A writer was descheduled mid-write: wait for it rather than spin.
				synchronized (this) {
					value = this.peak;
					at = this.stamp;
				}
				break;
			}
			if (spins > 1) {
				Thread.onSpinWait();
			}
			seen = this.version;
			value = this.peak;
			at = this.stamp;
		}
		while ((seen & 1) != 0 || seen != this.version);
		long elapsed = now - at;
		return (elapsed <= 0 || Double.isNaN(value)) ? value : value * Math.exp(-elapsed / decayNanos);
	}

}
