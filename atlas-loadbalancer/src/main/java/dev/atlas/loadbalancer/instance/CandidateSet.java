package dev.atlas.loadbalancer.instance;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * The identity of a candidate set: which instances it holds, by {@link InstanceKey} (id,
 * host and port), regardless of their order in the list and of their weights. Two
 * snapshots of the same instances (a refresh of an unchanged fleet, the same gray lane
 * cut from each refresh, the same retry set) have equal candidate sets, so a strategy can
 * keep state per candidate set that survives refreshes, e.g. smooth round robin's
 * position.
 *
 * <p>
 * Weights are left out on purpose: effective weights change while an instance warms up
 * (every tick) or is drained, and state keyed by weights would start over each time.
 *
 * <p>
 * Immutable and thread-safe; equality and hash code are by value. Holds one reference per
 * instance; {@link #size()} is a fair weight for a bounded cache of them.
 *
 * @since 0.1.0
 */
public final class CandidateSet {

	private final InstanceKey[] keys;

	private final int hash;

	private CandidateSet(InstanceKey[] keys) {
		this.keys = keys;
		this.hash = Arrays.hashCode(keys);
	}

	/**
	 * The candidate set of a snapshot. Sorts the keys: O(n log n), meant to be called
	 * once per snapshot (memoized with {@link InstanceSnapshot#derive}), never per
	 * request.
	 * @param snapshot any snapshot
	 * @return its candidate set
	 */
	public static CandidateSet of(InstanceSnapshot snapshot) {
		InstanceKey[] keys = new InstanceKey[snapshot.size()];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = snapshot.key(i);
		}
		Arrays.sort(keys, InstanceKey.ORDER);
		return new CandidateSet(keys);
	}

	/**
	 * Number of instances in the set.
	 * @return {@code >= 0}
	 */
	public int size() {
		return this.keys.length;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other
				|| (other instanceof CandidateSet set && this.hash == set.hash && Arrays.equals(this.keys, set.keys));
	}

	@Override
	public int hashCode() {
		return this.hash;
	}

	@Override
	public String toString() {
		return Arrays.toString(this.keys);
	}

}
