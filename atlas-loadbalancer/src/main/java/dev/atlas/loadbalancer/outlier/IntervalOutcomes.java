package dev.atlas.loadbalancer.outlier;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.atlas.loadbalancer.instance.InstanceKey;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The successes and failures of each instance in the current detection interval, for
 * success-rate and failure-percentage detection. Indexed by instance id (host for an
 * instance without one), each slot holding the few instances that share it, so counting a
 * known instance builds no key and takes no lock. An instance without a request in an
 * interval is dropped when the interval is drained, so the table holds the instances in
 * use. Thread-safe: a count racing with a drain lands in the next interval, or is lost
 * when the drain drops its instance's entry at that moment (an instance idle for the
 * whole interval).
 */
final class IntervalOutcomes {

	private final ConcurrentHashMap<String, Counts[]> bySlot = new ConcurrentHashMap<>();

	/**
	 * Counts one outcome.
	 * @param instance the instance called
	 * @param failed whether it failed (a 5xx answer or a gateway failure)
	 */
	void record(ServiceInstance instance, boolean failed) {
		Counts counts = find(instance);
		if (counts == null) {
			counts = add(instance);
		}
		if (counts.instance != instance) {
			// Written only when the registry hands out a new object: a write per request
			// would move the cache line between the cores counting it.
			counts.instance = instance;
		}
		(failed ? counts.failures : counts.successes).increment();
	}

	/**
	 * The counts of the interval that ends now, and a new interval from zero. Instances
	 * without a request in the interval are forgotten.
	 * @return one entry per instance with a request in the interval
	 */
	List<PeerJudgement.Counted> drain() {
		List<PeerJudgement.Counted> counted = new ArrayList<>();
		for (String slot : this.bySlot.keySet()) {
			this.bySlot.computeIfPresent(slot, (key, sharing) -> {
				Counts[] kept = new Counts[sharing.length];
				int size = 0;
				for (Counts counts : sharing) {
					long successes = counts.successes.sumThenReset();
					long failures = counts.failures.sumThenReset();
					if (successes + failures > 0) {
						counted.add(new PeerJudgement.Counted(counts.instance, successes, failures));
						kept[size++] = counts;
					}
				}
				return (size == 0) ? null : (size == kept.length) ? sharing : Arrays.copyOf(kept, size);
			});
		}
		return counted;
	}

	/**
	 * Instances counted (tests).
	 * @return {@code >= 0}
	 */
	int size() {
		return this.bySlot.values().stream().mapToInt((sharing) -> sharing.length).sum();
	}

	private @Nullable Counts find(ServiceInstance instance) {
		Counts[] sharing = this.bySlot.get(slot(instance));
		if (sharing != null) {
			for (Counts counts : sharing) {
				if (counts.key.matches(instance)) {
					return counts;
				}
			}
		}
		return null;
	}

	private Counts add(ServiceInstance instance) {
		InstanceKey key = InstanceKey.of(instance);
		Counts[] found = new Counts[1];
		this.bySlot.compute(slot(instance), (slot, sharing) -> {
			if (sharing != null) {
				for (Counts counts : sharing) {
					if (counts.key.equals(key)) {
						found[0] = counts;
						return sharing;
					}
				}
			}
			Counts created = new Counts(key, instance);
			found[0] = created;
			if (sharing == null) {
				return new Counts[] { created };
			}
			Counts[] more = Arrays.copyOf(sharing, sharing.length + 1);
			more[sharing.length] = created;
			return more;
		});
		return found[0];
	}

	private static String slot(ServiceInstance instance) {
		String id = instance.getInstanceId();
		if (id != null) {
			return id;
		}
		String host = instance.getHost();
		return (host != null) ? host : "";
	}

	/** One instance's counts in the interval. */
	private static final class Counts {

		final InstanceKey key;

		final LongAdder successes = new LongAdder();

		final LongAdder failures = new LongAdder();

		/** The last object the instance was seen as. */
		volatile ServiceInstance instance;

		Counts(InstanceKey key, ServiceInstance instance) {
			this.key = key;
			this.instance = instance;
		}

	}

}
