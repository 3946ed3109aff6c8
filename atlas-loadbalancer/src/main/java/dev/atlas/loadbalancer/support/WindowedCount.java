package dev.atlas.loadbalancer.support;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A count of events over a sliding window, kept in {@value #SLICES} slices (Finagle's
 * {@code WindowedAdder}): an event lands in the slice of its time, a slice older than the
 * window counts for nothing and is reused. Each slice is one {@code long} holding its
 * epoch (which slice of time it counts) in the high bits and its count in the low
 * {@value #COUNT_BITS}, changed by compare-and-set, so that counting is lock-free and
 * exact, allocates nothing, and a reused slice never mixes two epochs.
 *
 * <p>
 * The window is {@code SLICES} slices long; the sum covers the current slice and the
 * {@code SLICES - 1} before it, so it spans between {@code window - slice} and
 * {@code window}. Times are ticker nanoseconds, only compared with each other. A slice
 * counts up to 2^28 - 1 events (more are not counted). A model type shared by the
 * concerns (the retry budget counts with it). Thread-safe.
 *
 * @since 0.1.0
 */
public final class WindowedCount {

	/** Slices of a window. */
	public static final int SLICES = 10;

	private static final int COUNT_BITS = 28;

	private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;

	/**
	 * Unused longs before and after the slices (64 bytes each side), so that counts kept
	 * side by side by different threads do not share a cache line.
	 */
	private static final int PADDING = 8;

	private final AtomicLongArray slices = new AtomicLongArray(PADDING + SLICES + PADDING);

	private final long sliceNanos;

	private final long originNanos;

	/**
	 * @param windowNanos the window, {@code >= SLICES} ns
	 * @param nowNanos the ticker's time now, from which epochs are counted
	 */
	public WindowedCount(long windowNanos, long nowNanos) {
		this.sliceNanos = windowNanos / SLICES;
		// Epoch 0 is never a live one, so that the zeroed slices count for nothing.
		this.originNanos = nowNanos - this.sliceNanos;
	}

	/**
	 * Adds to the count of the slice of {@code nowNanos}.
	 * @param delta {@code 1} or {@code -1} (a count never goes below 0)
	 * @param nowNanos the ticker's time, not before the construction's; a time a whole
	 * window older than the slice's latest write is out of the window and ignored
	 */
	public void add(int delta, long nowNanos) {
		long epoch = epoch(nowNanos);
		int index = PADDING + (int) (epoch % SLICES);
		while (true) {
			long slice = this.slices.get(index);
			long sliceEpoch = slice >>> COUNT_BITS;
			if (sliceEpoch > epoch) {
				// a writer a whole window late (a long pause): its event is out of the
				// window
				return;
			}
			long count = (sliceEpoch == epoch) ? (slice & COUNT_MASK) : 0;
			long next = (epoch << COUNT_BITS) | Math.min(COUNT_MASK, Math.max(0, count + delta));
			if (this.slices.compareAndSet(index, slice, next)) {
				return;
			}
		}
	}

	/**
	 * The count over the window ending at {@code nowNanos}.
	 * @param nowNanos the ticker's time
	 * @return {@code >= 0}
	 */
	public long sum(long nowNanos) {
		long epoch = epoch(nowNanos);
		long sum = 0;
		for (int i = PADDING; i < PADDING + SLICES; i++) {
			long slice = this.slices.get(i);
			long age = epoch - (slice >>> COUNT_BITS);
			if (age >= 0 && age < SLICES) {
				sum += slice & COUNT_MASK;
			}
		}
		return sum;
	}

	/**
	 * The epoch of a time: which slice of time it falls in, counted from the
	 * construction. The current slice is {@code epoch(nowNanos)}, the one before it that
	 * minus 1, and so on; {@link #sum} covers the last {@code SLICES}. Two counts created
	 * with the same window and time have the same epochs, so that one call serves both.
	 * @param nowNanos the ticker's time
	 * @return {@code >= 1}
	 */
	public long epoch(long nowNanos) {
		return Math.max(1, (nowNanos - this.originNanos) / this.sliceNanos);
	}

	/**
	 * The count of one slice: 0 when the slice of that epoch counted nothing, or has been
	 * reused for a later one (it left the window), or is not yet counted.
	 * @param epoch an {@linkplain #epoch(long) epoch}
	 * @return {@code >= 0}
	 */
	public long count(long epoch) {
		if (epoch < 1) {
			return 0;
		}
		long slice = this.slices.get(PADDING + (int) (epoch % SLICES));
		return ((slice >>> COUNT_BITS) == epoch) ? (slice & COUNT_MASK) : 0;
	}

	/**
	 * The time {@link #sum} covers at {@code nowNanos}: the {@code SLICES - 1} whole
	 * slices before the current one and the current one so far, or less since
	 * construction. Divide a sum by it for a rate that has no saw-tooth as slices turn
	 * over.
	 * @param nowNanos the ticker's time, not before the construction's
	 * @return ns, {@code >= 1}
	 */
	public long coveredNanos(long nowNanos) {
		long sinceStart = nowNanos - this.originNanos - this.sliceNanos;
		long intoSlice = Math.floorMod(nowNanos - this.originNanos, this.sliceNanos);
		long window = (SLICES - 1) * this.sliceNanos + intoSlice;
		return Math.max(1, Math.min(sinceStart, window));
	}

}
