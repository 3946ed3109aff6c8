package dev.atlas.loadbalancer.stats;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.atlas.loadbalancer.instance.InstanceKey;

/**
 * What {@link InstanceStats} keeps of one instance (Envoy's per-host data, apart from the
 * table that finds it and the algorithms that read it): requests sent (each attempt,
 * retries included), requests in flight (and the slots reserved for requests about to
 * start), its two latency averages ({@link LatencyEwma}, {@link PeakEwma}) and its recent
 * failure rate ({@link FailureRate}).
 *
 * <p>
 * Counts are plain numbers of requests; latencies are in milliseconds. Never {@code null}
 * fields. Thread-safe: the counters are a {@link LongAdder} (written by every request
 * start, summed rarely) and {@link AtomicInteger}s; {@link #retired} is volatile;
 * {@link #startedAtLastCleanUp} is read and written under the table's clean-up lock only.
 */
final class InstanceCounts {

	/** The instance counted here. */
	final InstanceKey key;

	/** Requests started on the instance. */
	final LongAdder started = new LongAdder();

	/**
	 * Requests started and not completed, and slots reserved by picks for requests about
	 * to start, {@code >= 0}.
	 */
	final AtomicInteger inFlight = new AtomicInteger();

	/**
	 * Slots reserved by picks in the current lease period
	 * ({@link InstanceStats#tryReserve}) and not yet claimed by a request start; counted
	 * in {@link #inFlight}.
	 */
	final AtomicInteger reservedRecent = new AtomicInteger();

	/**
	 * Slots reserved in the previous lease period and not yet claimed; what is left of
	 * them at the next period expires (a pick never followed by a request).
	 */
	final AtomicInteger reservedOlder = new AtomicInteger();

	/** The plain latency average. */
	final LatencyEwma latency = new LatencyEwma();

	/** The peak-sensitive latency average. */
	final PeakEwma peak = new PeakEwma();

	/** The recent failure rate. */
	final FailureRate failures = new FailureRate();

	/**
	 * Requests seen by the previous clean-up; read and written under the clean-up lock.
	 */
	long startedAtLastCleanUp;

	/** Set before a clean-up removes this entry. */
	volatile boolean retired;

	/**
	 * @param key the instance's identity
	 */
	InstanceCounts(InstanceKey key) {
		this.key = key;
	}

	/**
	 * Claims a reserved slot for a request that starts, the oldest first.
	 * @return {@code false} when none is reserved (the start then counts itself in
	 * flight)
	 */
	boolean claimReservation() {
		return decrementIfPositive(this.reservedOlder) || decrementIfPositive(this.reservedRecent);
	}

	private static boolean decrementIfPositive(AtomicInteger count) {
		int n;
		do {
			n = count.get();
			if (n <= 0) {
				return false;
			}
		}
		while (!count.compareAndSet(n, n - 1));
		return true;
	}

	/**
	 * Ends a lease period: the reservations of the previous period that no start claimed
	 * expire, those of this period become the previous period's.
	 * @return the expired reservations, {@code >= 0}
	 */
	int expireReservations() {
		int expired = this.reservedOlder.getAndSet(0);
		int recent = this.reservedRecent.getAndSet(0);
		if (recent > 0) {
			this.reservedOlder.addAndGet(recent);
		}
		return Math.max(0, expired);
	}

	/**
	 * Records a completed request's duration in both averages.
	 * @param millis the duration in ms, {@code >= 0}
	 * @param now the ticker's time, in ns
	 * @param decayNanos the peak-sensitive average's decay time in ns, {@code > 0}
	 */
	void recordLatency(double millis, long now, double decayNanos) {
		this.latency.record(millis);
		this.peak.record(millis, now, decayNanos);
	}

	/**
	 * Records a failed request's duration so that it never makes the instance look
	 * faster: an average takes it only when it is slower than the average (a timeout),
	 * and neither starts from a failure (a fast error is not a fast answer).
	 * @param millis the duration in ms, {@code >= 0}
	 * @param now the ticker's time, in ns
	 * @param decayNanos the peak-sensitive average's decay time in ns, {@code > 0}
	 */
	void recordFailedLatency(double millis, long now, double decayNanos) {
		double plain = this.latency.millis();
		if (millis > plain) {
			this.latency.record(millis);
		}
		double peakNow = this.peak.millis(now, decayNanos);
		if (millis > peakNow) {
			this.peak.record(millis, now, decayNanos);
		}
	}

}
