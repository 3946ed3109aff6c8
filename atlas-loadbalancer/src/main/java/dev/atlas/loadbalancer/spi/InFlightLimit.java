package dev.atlas.loadbalancer.spi;

import java.util.concurrent.atomic.LongAdder;

/**
 * The per-instance in-flight limit of one service
 * ({@code atlas.loadbalancer.max-in-flight-per-instance}): how many requests this caller
 * may have in flight to any one instance. An instance at its limit is skipped by every
 * strategy; when every candidate is at its limit, the request gets no instance, with
 * {@link NoInstanceReason#SATURATED}, at once (no queueing), and is counted here.
 *
 * <p>
 * What the load balancer reads for every pick (one volatile read: {@code 0} = off, the
 * default) and the auto-configuration changes at runtime. Enforced by reserving a slot at
 * the pick ({@link LiveStats#tryReserve}), so that concurrent picks never take an
 * instance over the limit. Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class InFlightLimit {

	/** The limit that is off: no instance is ever skipped for its requests in flight. */
	public static final int OFF = 0;

	private volatile int max;

	private final LongAdder saturated = new LongAdder();

	/**
	 * Creates a limit that is {@linkplain #OFF off}.
	 */
	public InFlightLimit() {
		this(OFF);
	}

	/**
	 * Creates a limit.
	 * @param max requests in flight per instance, {@code >= 1}, or {@link #OFF}
	 * @throws IllegalArgumentException if {@code max} is negative
	 */
	public InFlightLimit(int max) {
		update(max);
	}

	/**
	 * The limit in force.
	 * @return requests in flight per instance, {@code >= 1}, or {@link #OFF} ({@code 0})
	 */
	public int max() {
		return this.max;
	}

	/**
	 * Puts another limit in force (a runtime change of configuration); requests already
	 * in flight stay, so an instance may be above a lowered limit until they complete.
	 * @param max requests in flight per instance, {@code >= 1}, or {@link #OFF}
	 * @throws IllegalArgumentException if {@code max} is negative
	 */
	public void update(int max) {
		if (max < 0) {
			throw new IllegalArgumentException("max must be 0 (off) or positive, was " + max);
		}
		this.max = max;
	}

	/** Counts a request that got no instance because every candidate was at the limit. */
	public void saturated() {
		this.saturated.increment();
	}

	/**
	 * Requests that got no instance because every candidate was at the limit, so far.
	 * @return {@code >= 0}; never decreases
	 */
	public long saturatedCount() {
		return this.saturated.sum();
	}

}
