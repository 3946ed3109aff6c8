package dev.atlas.loadbalancer.stats;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Per-instance call statistics of one service, as this caller sees them: picks (how often the balancer
 * chose the instance) and in-flight requests (started, not yet completed). Fed by the balancer and by a
 * Spring Cloud {@code LoadBalancerLifecycle}; read by the actuator view and the {@code atlas.picks} meter.
 *
 * <p>Instances are keyed by instance id (else {@code host:port}). A pick is recorded by position in the
 * snapshot it was chosen from: each snapshot resolves its instances' counters once (memoized on the
 * snapshot), so recording is an array read and a {@code LongAdder} increment: no lookup by instance, no lock,
 * no allocation. (This runs on every pick: keyed by instance in a size-bounded cache, the cache's bookkeeping
 * made a pick at 10,000 instances five times as expensive as at 10.)
 *
 * <p>Memory stays bounded under instance churn (every deployment brings new instance ids): when a new
 * snapshot is resolved, or a request starts on an untracked instance, while the table holds its threshold
 * ({@value #MAX_INSTANCES} at first), a clean-up forgets every instance that, since the previous clean-up,
 * was neither picked, nor in a resolved snapshot, nor has a request in flight; the threshold then becomes
 * twice what is left (at least {@value #MAX_INSTANCES}), so clean-ups cost O(1) amortized and a fleet larger
 * than the threshold is tracked whole. Thread-safe; counts that race with a clean-up may be missed.
 */
public final class InstanceStats {

	/** Number of tracked instances at which a new instance first triggers a clean-up. */
	public static final int MAX_INSTANCES = 10_000;

	private final int minThreshold;

	private final Map<String, Counts> view = new ConcurrentHashMap<>();

	/** Picks of the instances a clean-up forgot, so that {@link #totalPicks()} never decreases. */
	private final LongAdder forgottenPicks = new LongAdder();

	/** Number of clean-ups so far. */
	private final AtomicInteger epoch = new AtomicInteger();

	/** Changes when a clean-up forgot something, so that snapshots resolve their counters again. */
	private final AtomicInteger generation = new AtomicInteger();

	private volatile int threshold;

	/** Creates empty statistics. */
	public InstanceStats() {
		this(MAX_INSTANCES);
	}

	/**
	 * Creates empty statistics with another first clean-up threshold (tests).
	 * @param minThreshold {@code >= 1}
	 */
	InstanceStats(int minThreshold) {
		this.minThreshold = minThreshold;
		this.threshold = minThreshold;
	}

	/**
	 * Records a pick.
	 * @param snapshot the snapshot the instance was chosen from; not {@code null}
	 * @param index the position of the chosen instance in it, {@code 0 <= index < snapshot.size()}
	 * @throws IndexOutOfBoundsException if {@code index} is out of range
	 */
	public void picked(InstanceSnapshot snapshot, int index) {
		PicksOfSnapshot holder = snapshot.derive(this, (s) -> new PicksOfSnapshot());
		Resolved resolved = holder.resolved;
		if (resolved == null || resolved.generation != this.generation.get()) {
			resolved = resolve(snapshot);
			holder.resolved = resolved;
		}
		resolved.adders[index].increment();
	}

	private Resolved resolve(InstanceSnapshot snapshot) {
		// A clean-up, if due, runs first, so that it cannot forget what is being resolved.
		if (this.view.size() >= this.threshold) {
			cleanUp();
		}
		int generation = this.generation.get();
		int epoch = this.epoch.get();
		LongAdder[] adders = new LongAdder[snapshot.size()];
		for (int i = 0; i < adders.length; i++) {
			Counts counts = this.view.computeIfAbsent(key(snapshot.get(i)), (k) -> new Counts(epoch));
			counts.seenInEpoch = epoch;
			adders[i] = counts.picks;
		}
		return new Resolved(generation, adders);
	}

	/**
	 * Records a request start.
	 * @param instance the instance called; not {@code null}
	 */
	public void started(ServiceInstance instance) {
		counts(instance).inFlight.incrementAndGet();
	}

	/**
	 * Records a request completion (success or failure).
	 * @param instance the instance called; not {@code null}
	 */
	public void completed(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		if (counts != null) {
			counts.inFlight.updateAndGet((n) -> Math.max(0, n - 1));
		}
	}

	/**
	 * Picks of an instance so far.
	 * @param instance not {@code null}
	 * @return {@code >= 0}; {@code 0} for an instance not tracked (never picked, or forgotten)
	 */
	public long picks(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		return (counts != null) ? counts.picks.sum() : 0;
	}

	/**
	 * Requests to an instance started and not completed.
	 * @param instance not {@code null}
	 * @return {@code >= 0}
	 */
	public int inFlight(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		return (counts != null) ? counts.inFlight.get() : 0;
	}

	/**
	 * Picks of all instances so far, forgotten ones included: what the {@code atlas.picks} counter reports,
	 * summed when read so that a pick increments one counter, not two. O(tracked instances).
	 * @return {@code >= 0}; never decreases
	 */
	public long totalPicks() {
		long total = this.forgottenPicks.sum();
		for (Counts counts : this.view.values()) {
			total += counts.picks.sum();
		}
		return total;
	}

	/**
	 * Number of instances tracked.
	 * @return {@code >= 0}
	 */
	public int size() {
		return this.view.size();
	}

	private Counts counts(ServiceInstance instance) {
		String key = key(instance);
		Counts counts = this.view.get(key);
		if (counts != null) {
			return counts;
		}
		if (this.view.size() >= this.threshold) {
			cleanUp();
		}
		return this.view.computeIfAbsent(key, (k) -> new Counts(this.epoch.get()));
	}

	// O(tracked instances), then not again before the table doubles. Concurrent callers may both scan; the
	// outcome is the same.
	private void cleanUp() {
		int ending = this.epoch.getAndIncrement();
		boolean forgot = false;
		for (Iterator<Counts> it = this.view.values().iterator(); it.hasNext();) {
			Counts counts = it.next();
			long picks = counts.picks.sum();
			boolean used = picks != counts.picksAtLastCleanUp || counts.seenInEpoch >= ending
					|| counts.inFlight.get() > 0;
			if (used) {
				counts.picksAtLastCleanUp = picks;
			}
			else {
				it.remove();
				this.forgottenPicks.add(picks);
				forgot = true;
			}
		}
		if (forgot) {
			this.generation.incrementAndGet();
		}
		this.threshold = Math.max(this.minThreshold, 2 * this.view.size());
	}

	/**
	 * The key of an instance.
	 * @param instance not {@code null}
	 * @return its instance id, else {@code host:port}
	 */
	public static String key(ServiceInstance instance) {
		String id = instance.getInstanceId();
		return (id != null) ? id : instance.getHost() + ':' + instance.getPort();
	}

	/** The counters of one snapshot's instances, by position, as of a generation. */
	private record Resolved(int generation, LongAdder[] adders) {
	}

	/** Per-snapshot slot. */
	private static final class PicksOfSnapshot {

		volatile @Nullable Resolved resolved;

	}

	private static final class Counts {

		final LongAdder picks = new LongAdder();

		final AtomicInteger inFlight = new AtomicInteger();

		/** Picks seen by the previous clean-up; read and written by clean-ups. */
		volatile long picksAtLastCleanUp;

		/** The epoch in which a snapshot holding this instance was last resolved. */
		volatile int seenInEpoch;

		Counts(int epoch) {
			this.seenInEpoch = epoch;
		}

	}

}
