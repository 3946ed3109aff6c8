package dev.atlas.loadbalancer.stats;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One instance's plain latency average: an exponentially weighted moving average of the
 * durations of its completed requests, {@code average += ALPHA * (sample - average)}, the
 * first sample taken as it is.
 *
 * <p>
 * Units: milliseconds. {@link Double#NaN} until the first sample. Thread-safe and
 * lock-free: the average is one {@code double} kept as bits in an {@link AtomicLong} and
 * updated by compare-and-set, so recording allocates nothing.
 */
final class LatencyEwma {

	/**
	 * Weight of the newest sample: 0.25, so that about the last 7 requests carry 86 % of
	 * the weight (1 - 0.75^7).
	 */
	static final double ALPHA = 0.25;

	private static final long UNKNOWN = Double.doubleToRawLongBits(Double.NaN);

	/** The average in ms, as {@code double} bits; NaN until the first sample. */
	private final AtomicLong bits = new AtomicLong(UNKNOWN);

	/**
	 * Adds a sample.
	 * @param millis a request's duration in ms, {@code >= 0}
	 */
	void record(double millis) {
		long current;
		long next;
		do {
			current = this.bits.get();
			double average = Double.longBitsToDouble(current);
			double updated = Double.isNaN(average) ? millis : average + ALPHA * (millis - average);
			next = Double.doubleToRawLongBits(updated);
		}
		while (!this.bits.compareAndSet(current, next));
	}

	/**
	 * The average.
	 * @return ms, or {@link Double#NaN} before the first sample
	 */
	double millis() {
		return Double.longBitsToDouble(this.bits.get());
	}

}
