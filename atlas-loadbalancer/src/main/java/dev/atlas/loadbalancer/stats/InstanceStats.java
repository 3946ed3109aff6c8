package dev.atlas.loadbalancer.stats;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongSupplier;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.LiveStats;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Per-instance request statistics of one service, as this caller sees them: requests sent
 * (each attempt counts, retries included) and requests in flight (started, not yet
 * completed). Fed by Spring Cloud LoadBalancer's request lifecycle
 * ({@code LoadBalancerLifecycle.onStartRequest} / {@code onComplete}, which RestTemplate,
 * RestClient, WebClient, Feign and Spring Cloud Gateway all call); read by the actuator
 * view, the {@code atlas.picks} meter and the load-aware strategies
 * ({@code least-request}, {@code peak-ewma}, bounded-load {@code ring-hash}) through
 * {@link LiveStats}.
 *
 * <p>
 * This class is the table; what it keeps of each instance is an {@link InstanceCounts}
 * (counters and two latency averages: a plain moving average, {@link LatencyEwma}, weight
 * {@value #LATENCY_ALPHA} for the newest sample, and the peak-sensitive one
 * {@code peak-ewma} ranks by, {@link PeakEwma}, Finagle's), as Envoy keeps host data
 * apart from the load balancer and its statistics.
 *
 * <p>
 * Counting happens when a request starts, not in the balancer's {@code choose}: a pick
 * then writes no memory that other threads write too. (Counted in {@code choose}, a
 * per-instance counter made a pick with two threads over 10,000 instances twice as
 * expensive, from cache lines moving between cores; the request lifecycle touches
 * per-instance state anyway.)
 *
 * <p>
 * Instances are told apart by their {@link InstanceKey}: instance id, host and port, so
 * two instances that report one id have counts of their own. The table is indexed by
 * instance id (by host for an instance without one), each slot holding the few instances
 * that share it, compared by id, host and port, so recording never builds a key.
 *
 * <p>
 * The table follows the instances in use, not the history (every deployment brings new
 * instance ids): a clean-up forgets every instance without a request since the previous
 * clean-up and none in flight. One runs every {@linkplain #idleWindowNanos() idle window}
 * (max(1 min, 6 decay times), started by the first request completion or new instance
 * after it), so an instance that left the registry, or is no longer called, is forgotten
 * one to two windows after its last request; by then its averages and failure rate have
 * decayed to under 0.3 % of what they were, so forgetting it changes no choice (its
 * {@linkplain #requests request count} starts again from 0). One also runs when a new
 * instance appears while the table holds its threshold ({@value #MAX_INSTANCES} at
 * first), which then becomes twice what is left (at least {@value #MAX_INSTANCES}), so
 * clean-ups cost O(1) amortized and a fleet larger than the threshold is tracked whole.
 * Only one clean-up runs at a time; a request that starts on an instance while it is
 * being forgotten is counted again on its fresh entry. Thread-safe; recording takes no
 * lock and allocates nothing for a tracked instance.
 *
 * <p>
 * With a per-instance in-flight limit, a pick {@linkplain #tryReserve reserves} a slot
 * (the in-flight count goes up at the pick, by compare-and-set under the limit) and the
 * request's start claims it instead of counting again. A reservation that no start claims
 * (a pick whose request was never sent, e.g. an instance chosen by hand and not called)
 * expires one to two {@linkplain #RESERVATION_LEASE leases} after it was made, so that it
 * cannot hold a slot forever; a start that finds no reservation counts itself.
 *
 * @since 0.1.0
 */
public final class InstanceStats implements LiveStats {

	/** Number of tracked instances at which a new instance first triggers a clean-up. */
	public static final int MAX_INSTANCES = 10_000;

	/**
	 * Default decay time of the peak-sensitive average: 10 s, Finagle's and Linkerd's.
	 */
	public static final Duration DEFAULT_DECAY_TIME = Duration.ofSeconds(10);

	/**
	 * How long a reserved slot waits for its request to start before it may expire: 1 s
	 * (a pick and its start are microseconds apart on every client's path).
	 */
	public static final Duration RESERVATION_LEASE = Duration.ofSeconds(1);

	/**
	 * Weight of the newest sample in the latency average ({@link LatencyEwma#ALPHA}).
	 */
	static final double LATENCY_ALPHA = LatencyEwma.ALPHA;

	/**
	 * Decay times after an instance's last failure when its failure rate, even 1, reads
	 * 0: {@code ln(1 / COUNTED_FROM)}.
	 */
	private static final double FAILURES_FORGOTTEN_AFTER_DECAYS = Math.log(1 / FailureRate.COUNTED_FROM);

	private static final long NO_FAILURE = Long.MIN_VALUE;

	private static final long RESERVATION_LEASE_NANOS = RESERVATION_LEASE.toNanos();

	/** Shortest idle window: 1 min in ns. */
	private static final long MIN_IDLE_WINDOW_NANOS = Duration.ofMinutes(1).toNanos();

	/**
	 * Decay times in an idle window: after six, an average or rate has kept e^-6 (0.25 %)
	 * of its weight.
	 */
	private static final int DECAYS_PER_IDLE_WINDOW = 6;

	private final int minThreshold;

	/**
	 * By instance id (host when there is none): the instances sharing it, as an array
	 * replaced as a whole.
	 */
	private final ConcurrentHashMap<String, InstanceCounts[]> view = new ConcurrentHashMap<>();

	/** Number of instances in {@link #view}. */
	private final AtomicInteger tracked = new AtomicInteger();

	/**
	 * Requests to all instances: what {@code atlas.picks} reports (a monotonic counter).
	 */
	private final LongAdder total = new LongAdder();

	/** Requests to all instances in flight. */
	private final LongAdder inFlightTotal = new LongAdder();

	private final ReentrantLock cleaning = new ReentrantLock();

	private volatile int threshold;

	// Built once: a method reference written at the call site would be a new object per
	// call.
	private final Function<InstanceSnapshot, Cells> cells = Cells::new;

	/** Decay time of the peak-sensitive average, in ns, {@code > 0}. */
	private volatile double decayNanos;

	private volatile FailureStatuses failureStatuses = FailureStatuses.DEFAULT;

	/** When an instance last failed a request (ticker ns), or {@link #NO_FAILURE}. */
	private volatile long lastFailureNanos = NO_FAILURE;

	private final LongSupplier nanoTicker;

	/** Whether a pick ever reserved a slot: only then do leases need ending. */
	private volatile boolean reserving;

	/** When the current lease period ends (ticker ns); valid once {@link #reserving}. */
	private final AtomicLong leaseEndsNanos = new AtomicLong();

	/** Reservations that expired unclaimed. */
	private final LongAdder expiredReservations = new LongAdder();

	/** When the next idle clean-up is due (ticker ns). */
	private volatile long nextIdleCleanUpNanos;

	/**
	 * Creates empty statistics with the default decay time ({@link #DEFAULT_DECAY_TIME})
	 * on {@link System#nanoTime()}.
	 */
	public InstanceStats() {
		this(DEFAULT_DECAY_TIME, System::nanoTime);
	}

	/**
	 * Creates empty statistics.
	 * @param decayTime decay time of the peak-sensitive average, positive
	 * @param nanoTicker the time in ns (e.g. {@code System::nanoTime}), only compared
	 * with itself; thread-safe
	 * @throws IllegalArgumentException if {@code decayTime} is not positive
	 */
	public InstanceStats(Duration decayTime, LongSupplier nanoTicker) {
		this(MAX_INSTANCES, decayTime, nanoTicker);
	}

	/**
	 * Creates empty statistics with another first clean-up threshold (tests).
	 * @param minThreshold {@code >= 1}
	 */
	InstanceStats(int minThreshold) {
		this(minThreshold, DEFAULT_DECAY_TIME, System::nanoTime);
	}

	private InstanceStats(int minThreshold, Duration decayTime, LongSupplier nanoTicker) {
		if (decayTime.isNegative() || decayTime.isZero()) {
			throw new IllegalArgumentException("decayTime must be positive, was " + decayTime);
		}
		this.minThreshold = minThreshold;
		this.threshold = minThreshold;
		this.decayNanos = decayTime.toNanos();
		this.nanoTicker = Objects.requireNonNull(nanoTicker, "nanoTicker");
		this.nextIdleCleanUpNanos = nanoTicker.getAsLong() + idleWindowNanos();
	}

	/**
	 * Records a request start: it claims a slot a pick {@linkplain #tryReserve reserved}
	 * on the instance, else it counts itself in flight.
	 * @param instance the instance called
	 */
	public void started(ServiceInstance instance) {
		this.total.increment();
		while (true) {
			InstanceCounts counts = counts(instance);
			if (counts.claimReservation()) {
				// in flight since the pick (an entry with a slot reserved is never
				// retired)
				counts.started.increment();
				return;
			}
			counts.inFlight.incrementAndGet();
			if (!counts.retired) {
				counts.started.increment();
				this.inFlightTotal.increment();
				return;
			}
			// Being forgotten meanwhile: take it back and count it on the instance's
			// fresh entry, where its completion will land. (A clean-up re-checks the
			// in-flight count after marking an entry retired and keeps it if it moved:
			// either it sees this increment or this sees the mark.)
			counts.inFlight.decrementAndGet();
		}
	}

	/**
	 * Reserves a slot of an instance for a request about to be sent, unless this caller
	 * already has {@code max} requests in flight to it (slots reserved included): the
	 * in-flight count goes up now, by compare-and-set, so that concurrent picks never
	 * take the instance over {@code max}; the request's {@link #started start} claims the
	 * slot. A slot no start claims expires after one to two {@link #RESERVATION_LEASE
	 * leases}. Lock-free; allocates nothing for a tracked instance.
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @param max the limit, {@code >= 1}
	 * @return {@code true} when a slot was reserved
	 */
	@Override
	public boolean tryReserve(InstanceSnapshot candidates, int position, int max) {
		if (!this.reserving) {
			this.leaseEndsNanos.set(this.nanoTicker.getAsLong() + RESERVATION_LEASE_NANOS);
			this.reserving = true;
		}
		InstanceCounts counts = candidates.derive(this, this.cells).at(position);
		while (true) {
			if (counts == null) {
				counts = counts(candidates.get(position));
			}
			int n = counts.inFlight.get();
			if (n >= max) {
				// Before saying no: slots held by picks never sent must not block it.
				if (endLeaseIfDue(this.nanoTicker.getAsLong()) && counts.inFlight.get() < max) {
					continue;
				}
				return false;
			}
			if (!counts.inFlight.compareAndSet(n, n + 1)) {
				continue;
			}
			if (counts.retired) {
				// forgotten meanwhile: reserve on the fresh entry
				counts.inFlight.decrementAndGet();
				counts = null;
				continue;
			}
			counts.reservedRecent.incrementAndGet();
			this.inFlightTotal.increment();
			return true;
		}
	}

	/**
	 * Ends the lease period when it is due: reservations older than a period that no
	 * start claimed expire and leave the in-flight counts. One caller does it; the others
	 * go on.
	 * @param now the ticker's time
	 * @return {@code true} when this call ended a period
	 */
	private boolean endLeaseIfDue(long now) {
		if (!this.reserving) {
			return false;
		}
		long ends = this.leaseEndsNanos.get();
		if (now - ends < 0 || !this.leaseEndsNanos.compareAndSet(ends, now + RESERVATION_LEASE_NANOS)) {
			return false;
		}
		// After a whole lease without an end (an idle service), the recent reservations
		// are a lease old too: both generations expire.
		boolean idle = now - ends >= RESERVATION_LEASE_NANOS;
		for (InstanceCounts[] sharing : this.view.values()) {
			for (InstanceCounts counts : sharing) {
				int expired = counts.expireReservations();
				if (idle) {
					expired += counts.expireReservations();
				}
				if (expired > 0) {
					this.inFlightTotal.add(-release(counts.inFlight, expired));
					this.expiredReservations.add(expired);
				}
			}
		}
		return true;
	}

	/** Takes up to {@code n} from a count, never below 0; returns how many it took. */
	private static int release(AtomicInteger count, int n) {
		while (true) {
			int current = count.get();
			int next = Math.max(0, current - n);
			if (count.compareAndSet(current, next)) {
				return current - next;
			}
		}
	}

	/**
	 * Slots reserved by picks that no request start claimed within their lease, so far:
	 * picks whose request was never sent.
	 * @return {@code >= 0}; never decreases
	 */
	public long expiredReservations() {
		return this.expiredReservations.sum();
	}

	/**
	 * Records a request completion (success or failure) of a request recorded by
	 * {@link #started}, without its duration.
	 * @param instance the instance called
	 */
	public void completed(ServiceInstance instance) {
		completed(instance, -1);
	}

	/**
	 * Records a request completion (success or failure) of a request recorded by
	 * {@link #started}, with its duration.
	 * @param instance the instance called
	 * @param durationNanos how long the request took, in ns; negative when unknown (then
	 * the latency average is not updated)
	 */
	public void completed(ServiceInstance instance, long durationNanos) {
		completed(instance, durationNanos, false);
	}

	/**
	 * Records a request completion of a request recorded by {@link #started}: a success,
	 * or a failure of the instance (an answer with one of the
	 * {@linkplain #failureStatuses() failure statuses}, or no answer because the instance
	 * was unreachable or stuck). A failure never makes the instance look better: its
	 * duration does not lower the latency averages (a fast error is not a fast answer),
	 * and it raises the instance's {@linkplain #failureRate failure rate}, which the
	 * load-aware strategies weigh.
	 * @param instance the instance called
	 * @param durationNanos how long the request took, in ns; negative when unknown (then
	 * the latency averages are not updated)
	 * @param failed whether the instance failed the request
	 */
	public void completed(ServiceInstance instance, long durationNanos, boolean failed) {
		InstanceCounts counts = find(instance);
		if (counts == null) {
			return;
		}
		if (counts.inFlight.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			this.inFlightTotal.decrement();
		}
		boolean rateMoves = failed || !counts.failures.isZero();
		if (durationNanos < 0 && !rateMoves) {
			return;
		}
		long now = this.nanoTicker.getAsLong();
		if (durationNanos >= 0) {
			double millis = durationNanos / 1_000_000.0;
			if (failed) {
				counts.recordFailedLatency(millis, now, this.decayNanos);
			}
			else {
				counts.recordLatency(millis, now, this.decayNanos);
			}
		}
		if (rateMoves) {
			counts.failures.record(failed, now, this.decayNanos);
		}
		if (failed) {
			this.lastFailureNanos = now;
		}
		endLeaseIfDue(now);
		if (now - this.nextIdleCleanUpNanos >= 0) {
			cleanUp(now);
		}
	}

	/**
	 * The recent failure rate of an instance: an exponentially weighted moving average of
	 * its outcomes (weight 0.25 for the newest), decaying towards 0 with the decay time
	 * of the peak-sensitive average when it is not called.
	 * @param instance an instance
	 * @return a ratio in 0..1; {@code 0} for an instance not tracked
	 */
	public double failureRate(ServiceInstance instance) {
		InstanceCounts counts = find(instance);
		return (counts != null) ? counts.failures.rate(this.nanoTicker.getAsLong(), this.decayNanos) : 0;
	}

	/**
	 * Whether an instance may have a failure rate above 0: one failed within the time a
	 * rate of 1 takes to decay below {@value FailureRate#COUNTED_FROM}. Reads the clock
	 * only in that window after a failure; a healthy service pays one volatile read.
	 * @return {@code false} when every failure rate reads 0
	 */
	@Override
	public boolean anyFailing() {
		long last = this.lastFailureNanos;
		if (last == NO_FAILURE) {
			return false;
		}
		if (this.nanoTicker.getAsLong() - last <= this.decayNanos * FAILURES_FORGOTTEN_AFTER_DECAYS) {
			return true;
		}
		// Forgotten: later picks need not read the clock (a failure meanwhile sets it
		// again, and at worst one pick misses it).
		this.lastFailureNanos = NO_FAILURE;
		return false;
	}

	@Override
	public double failureRate(InstanceSnapshot candidates, int position) {
		InstanceCounts counts = candidates.derive(this, this.cells).at(position);
		return (counts == null || counts.failures.isZero()) ? 0
				: counts.failures.rate(this.nanoTicker.getAsLong(), this.decayNanos);
	}

	/**
	 * The statuses that count as a failure of the instance.
	 * @return by default {@link FailureStatuses#DEFAULT} (every 5xx and 429)
	 */
	public FailureStatuses failureStatuses() {
		return this.failureStatuses;
	}

	/**
	 * Changes the statuses that count as a failure (a runtime change of configuration).
	 * @param statuses the new set
	 */
	public void failureStatuses(FailureStatuses statuses) {
		this.failureStatuses = Objects.requireNonNull(statuses, "statuses");
	}

	/**
	 * Recent latency of an instance: an exponentially weighted moving average of
	 * completed requests' durations (weight {@value #LATENCY_ALPHA} for the newest).
	 * @param instance an instance
	 * @return ms, or {@link Double#NaN} when no duration was recorded
	 */
	public double latencyMillis(ServiceInstance instance) {
		InstanceCounts counts = find(instance);
		return (counts != null) ? counts.latency.millis() : Double.NaN;
	}

	/**
	 * Changes the decay time of the peak-sensitive average (a runtime change of
	 * configuration): the averages kept so far stay and decay at the new rate from now
	 * on.
	 * @param decayTime positive
	 * @throws IllegalArgumentException if {@code decayTime} is not positive
	 */
	public void decayTime(Duration decayTime) {
		if (decayTime.isNegative() || decayTime.isZero()) {
			throw new IllegalArgumentException("decayTime must be positive, was " + decayTime);
		}
		this.decayNanos = decayTime.toNanos();
	}

	/**
	 * The peak-sensitive latency average of an instance, decayed to now.
	 * @param instance an instance
	 * @return ms, or {@link Double#NaN} when no duration was recorded
	 */
	public double peakEwmaMillis(ServiceInstance instance) {
		InstanceCounts counts = find(instance);
		return (counts != null) ? counts.peak.millis(this.nanoTicker.getAsLong(), this.decayNanos) : Double.NaN;
	}

	@Override
	public double peakEwmaMillis(InstanceSnapshot candidates, int position, long nowNanos) {
		InstanceCounts counts = candidates.derive(this, this.cells).at(position);
		return (counts != null) ? counts.peak.millis(nowNanos, this.decayNanos) : Double.NaN;
	}

	@Override
	public long nanoTime() {
		return this.nanoTicker.getAsLong();
	}

	@Override
	public int inFlight(InstanceSnapshot candidates, int position) {
		InstanceCounts counts = candidates.derive(this, this.cells).at(position);
		return (counts != null) ? counts.inFlight.get() : 0;
	}

	@Override
	public double latencyMillis(InstanceSnapshot candidates, int position) {
		InstanceCounts counts = candidates.derive(this, this.cells).at(position);
		return (counts != null) ? counts.latency.millis() : Double.NaN;
	}

	/**
	 * Requests sent to an instance so far.
	 * @param instance an instance
	 * @return {@code >= 0}; {@code 0} for an instance not tracked (never called, or
	 * forgotten)
	 */
	public long requests(ServiceInstance instance) {
		InstanceCounts counts = find(instance);
		return (counts != null) ? counts.started.sum() : 0;
	}

	/**
	 * Requests to an instance started and not completed, and slots reserved for requests
	 * about to start (with a per-instance limit).
	 * @param instance an instance
	 * @return {@code >= 0}
	 */
	public long inFlight(ServiceInstance instance) {
		InstanceCounts counts = find(instance);
		return (counts != null) ? counts.inFlight.get() : 0;
	}

	/**
	 * Requests to all instances started and not completed, and slots reserved for
	 * requests about to start (with a per-instance limit).
	 * @return {@code >= 0} (but for a moment while a completion is being counted)
	 */
	public long inFlightTotal() {
		return this.inFlightTotal.sum();
	}

	@Override
	public long serviceInFlight() {
		return this.inFlightTotal.sum();
	}

	/**
	 * Requests to all instances so far, forgotten ones included.
	 * @return {@code >= 0}; never decreases
	 */
	public long totalRequests() {
		return this.total.sum();
	}

	/**
	 * Number of instances tracked.
	 * @return {@code >= 0}
	 */
	public int size() {
		return this.tracked.get();
	}

	/**
	 * The idle window: every window a clean-up forgets the instances without a request
	 * since the previous one and none in flight. max(1 min, 6 decay times), so 1 min with
	 * the default decay time of 10 s.
	 * @return ns, {@code > 0}
	 */
	public long idleWindowNanos() {
		return Math.max(MIN_IDLE_WINDOW_NANOS, (long) (DECAYS_PER_IDLE_WINDOW * this.decayNanos));
	}

	/** The slot of an instance: its id, else its host. */
	private static String slot(@Nullable String id, @Nullable String host) {
		return (id != null) ? id : (host != null) ? host : "";
	}

	private @Nullable InstanceCounts find(ServiceInstance instance) {
		return find(instance.getInstanceId(), instance.getHost(), instance.getPort());
	}

	private @Nullable InstanceCounts find(InstanceKey key) {
		return find(key.id(), key.host(), key.port());
	}

	/** The counts of the instance with this id, host and port. Allocates nothing. */
	private @Nullable InstanceCounts find(@Nullable String id, @Nullable String host, int port) {
		InstanceCounts[] sharing = this.view.get(slot(id, host));
		if (sharing != null) {
			for (InstanceCounts counts : sharing) {
				if (counts.key.matches(id, host, port)) {
					return counts;
				}
			}
		}
		return null;
	}

	private InstanceCounts counts(ServiceInstance instance) {
		InstanceCounts counts = find(instance);
		if (counts != null && !counts.retired) {
			return counts;
		}
		if (this.tracked.get() >= this.threshold) {
			cleanUp(Long.MIN_VALUE);
		}
		else {
			long now = this.nanoTicker.getAsLong();
			if (now - this.nextIdleCleanUpNanos >= 0) {
				cleanUp(now);
			}
		}
		InstanceKey key = InstanceKey.of(instance);
		InstanceCounts[] found = new InstanceCounts[1];
		this.view.compute(slot(key.id(), key.host()), (slot, sharing) -> {
			if (sharing != null) {
				for (InstanceCounts existing : sharing) {
					if (existing.key.equals(key)) {
						found[0] = existing;
						return sharing;
					}
				}
			}
			InstanceCounts created = new InstanceCounts(key);
			found[0] = created;
			this.tracked.incrementAndGet();
			if (sharing == null) {
				return new InstanceCounts[] { created };
			}
			InstanceCounts[] more = Arrays.copyOf(sharing, sharing.length + 1);
			more[sharing.length] = created;
			return more;
		});
		return found[0];
	}

	/**
	 * Forgets every instance without a request since the previous clean-up and none in
	 * flight. O(tracked instances), then not again before the table doubles or the idle
	 * window passes; one at a time (a caller that finds another clean-up running goes on
	 * without waiting).
	 * @param now the ticker's time for an idle clean-up, {@link Long#MIN_VALUE} for one
	 * because the table holds its threshold
	 */
	private void cleanUp(long now) {
		if (!this.cleaning.tryLock()) {
			return;
		}
		try {
			if (now == Long.MIN_VALUE) {
				if (this.tracked.get() < this.threshold) {
					return;
				}
			}
			else if (now - this.nextIdleCleanUpNanos < 0) {
				return;
			}
			else {
				this.nextIdleCleanUpNanos = now + idleWindowNanos();
			}
			for (String slot : this.view.keySet()) {
				this.view.computeIfPresent(slot, (k, sharing) -> {
					InstanceCounts[] kept = new InstanceCounts[sharing.length];
					int size = 0;
					for (InstanceCounts counts : sharing) {
						long started = counts.started.sum();
						if (started == counts.startedAtLastCleanUp && counts.inFlight.get() == 0
								&& retire(counts, started)) {
							this.tracked.decrementAndGet();
						}
						else {
							counts.startedAtLastCleanUp = started;
							kept[size++] = counts;
						}
					}
					return (size == 0) ? null : (size == kept.length) ? sharing : Arrays.copyOf(kept, size);
				});
			}
			this.threshold = Math.max(this.minThreshold, 2 * this.tracked.get());
		}
		finally {
			this.cleaning.unlock();
		}
	}

	/**
	 * Marks an entry retired unless a request started on it meanwhile (then it stays).
	 * Runs under the map's lock of the entry's slot, so a request that sees the mark and
	 * looks the instance up again finds the slot without the entry.
	 */
	private static boolean retire(InstanceCounts counts, long started) {
		counts.retired = true;
		if (counts.inFlight.get() != 0 || counts.started.sum() != started) {
			counts.retired = false;
			return false;
		}
		return true;
	}

	/**
	 * The statistics of a snapshot's instances by position, resolved once per snapshot;
	 * instance keys are computed once too. An instance first called (or forgotten and
	 * called again) after that is looked up by its key on each read until it has an
	 * entry, which is then stored in its slot (a benign race: every writer stores the
	 * current entry); reads write nothing otherwise.
	 */
	private final class Cells {

		private final InstanceKey[] keys;

		private final @Nullable InstanceCounts[] byPosition;

		Cells(InstanceSnapshot snapshot) {
			this.keys = new InstanceKey[snapshot.size()];
			this.byPosition = new InstanceCounts[snapshot.size()];
			for (int i = 0; i < this.byPosition.length; i++) {
				this.keys[i] = snapshot.key(i);
				this.byPosition[i] = find(this.keys[i]);
			}
		}

		@Nullable InstanceCounts at(int position) {
			InstanceCounts counts = this.byPosition[position];
			if (counts == null || counts.retired) {
				InstanceCounts current = find(this.keys[position]);
				if (current != null && current != counts) {
					this.byPosition[position] = current;
				}
				return current;
			}
			return counts;
		}

	}

}
