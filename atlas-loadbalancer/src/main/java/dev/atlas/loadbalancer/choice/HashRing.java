package dev.atlas.loadbalancer.choice;

import java.util.Arrays;

import dev.atlas.loadbalancer.instance.InstanceKey;
import net.openhft.hashing.LongHashFunction;

/**
 * A consistent-hashing ring (Karger et al., 1997) over the positions of a snapshot, with
 * points per instance in proportion to its weight: O(p log p) to build for p points, O(1)
 * expected per lookup (a bucket index of about one bucket per point, then a short scan;
 * at worst O(p) for a bucket that holds every point, which random points make vanishingly
 * unlikely). An instance's points are derived from its host and port only (not its
 * weight, id or position), so an instance keeps its points across snapshots, callers and
 * restarts at the same address, and a key moves only when the instance it mapped to
 * leaves, or an instance joins right before it.
 *
 * <p>
 * Points are 64-bit XXH3 hashes (OpenHFT zero-allocation-hashing); each ring entry packs
 * the point's upper {@value #HASH_BITS} bits with the position (lower
 * {@value #POSITION_BITS} bits), so the ring is one sorted {@code long[]}, plus a bucket
 * index of 2 to 4 bytes per point. About {@value #MAX_POINTS} points at most (8 MB, 12
 * with the index): beyond, every instance gets proportionally fewer (and still at least
 * one). Immutable and thread-safe.
 */
final class HashRing {

	/** Bits of an entry that hold the position. */
	static final int POSITION_BITS = 20;

	/** Bits of an entry that hold the point. */
	static final int HASH_BITS = 64 - POSITION_BITS;

	/** Most positions a ring can hold: 1,048,576 instances. */
	static final int MAX_POSITIONS = 1 << POSITION_BITS;

	/**
	 * Points on a ring beyond which instances get fewer (one more per instance at most,
	 * each getting at least one).
	 */
	static final int MAX_POINTS = 1 << 20;

	private static final long POSITION_MASK = MAX_POSITIONS - 1;

	private static final LongHashFunction HASH = LongHashFunction.xx3();

	/** Sorted: point (upper bits) | position (lower bits). */
	private final long[] entries;

	/** By position: the hash of the instance's host and port, its points' base. */
	private final long[] bases;

	/** Bits of a point that pick its bucket. */
	private final int bucketBits;

	/**
	 * By bucket (the point's upper {@link #bucketBits} bits, in the entries' order): the
	 * index of its first entry; one more element, {@code entries.length}.
	 */
	private final int[] bucketStarts;

	private HashRing(long[] entries, long[] bases) {
		this.entries = entries;
		this.bases = bases;
		// About one entry per bucket: a lookup reads one bucket and one or two entries
		// instead of binary-searching (a branch misprediction and often a cache miss per
		// step over a ring of thousands of points).
		this.bucketBits = Math.max(1, 31 - Integer.numberOfLeadingZeros(entries.length));
		this.bucketStarts = new int[(1 << this.bucketBits) + 1];
		int index = 0;
		for (int bucket = 0; bucket < this.bucketStarts.length - 1; bucket++) {
			while (index < entries.length && bucketOf(entries[index]) < bucket) {
				index++;
			}
			this.bucketStarts[bucket] = index;
		}
		this.bucketStarts[this.bucketStarts.length - 1] = entries.length;
	}

	/** The bucket of an entry or point: its upper bits, unsigned, so in sorted order. */
	private int bucketOf(long entry) {
		return (int) ((entry ^ Long.MIN_VALUE) >>> (64 - this.bucketBits));
	}

	/**
	 * Builds the ring.
	 * @param keys the instances' identities by position
	 * @param weights effective weights by position, finite, {@code >= 0}, at least one
	 * positive; instances of weight 0 get no point
	 * @param virtualNodes points per instance of average (positive) weight, {@code >= 1}
	 * @return the ring
	 * @throws IllegalArgumentException if there are more than {@value #MAX_POSITIONS}
	 * positions
	 */
	static HashRing of(InstanceKey[] keys, double[] weights, int virtualNodes) {
		if (weights.length > MAX_POSITIONS) {
			throw new IllegalArgumentException("at most " + MAX_POSITIONS + " instances, got " + weights.length);
		}
		int positive = 0;
		double total = 0;
		for (double weight : weights) {
			if (weight > 0) {
				positive++;
				total += weight;
			}
		}
		double perUnit = (double) virtualNodes * positive / total;
		long wanted = 0;
		for (double weight : weights) {
			if (weight > 0) {
				wanted += Math.max(1, Math.round(weight * perUnit));
			}
		}
		boolean capped = wanted > MAX_POINTS;
		if (capped) {
			perUnit = perUnit * MAX_POINTS / wanted;
		}
		int[] counts = new int[weights.length];
		int size = 0;
		for (int i = 0; i < weights.length; i++) {
			if (weights[i] > 0) {
				double exact = weights[i] * perUnit;
				counts[i] = (int) Math.max(1, capped ? Math.floor(exact) : Math.round(exact));
				size += counts[i];
			}
		}
		long[] entries = new long[size];
		long[] bases = new long[weights.length];
		int next = 0;
		for (int position = 0; position < weights.length; position++) {
			long base = HASH.hashChars(keys[position].host() + ':' + keys[position].port());
			bases[position] = base;
			for (int point = 0; point < counts[position]; point++) {
				entries[next++] = (HASH.hashLong(base + point) & ~POSITION_MASK) | position;
			}
		}
		Arrays.sort(entries);
		return new HashRing(entries, bases);
	}

	/**
	 * The hash of a key, as the ring compares it.
	 * @param key a key
	 * @param from start index in {@code key}
	 * @param to end index in {@code key}, exclusive
	 * @return the hash
	 */
	static long hash(String key, int from, int to) {
		return HASH.hashChars(key, from, to - from);
	}

	/**
	 * The index of the first entry clockwise from a hash (wrapping around).
	 * @param hash a key's hash
	 * @return {@code 0 <= index < size()}
	 */
	int indexOf(long hash) {
		long point = hash & ~POSITION_MASK;
		int bucket = bucketOf(point);
		int index = this.bucketStarts[bucket];
		int end = this.bucketStarts[bucket + 1];
		while (index < end && this.entries[index] < point) {
			index++;
		}
		// Past this bucket's entries: the next entry is the first of a later bucket.
		return (index == this.entries.length) ? 0 : index;
	}

	/**
	 * The position of the instance an entry belongs to.
	 * @param index {@code 0 <= index < size()}, taken modulo {@link #size()}
	 * @return the position in the snapshot
	 */
	int positionAt(int index) {
		return (int) (this.entries[index % this.entries.length] & POSITION_MASK);
	}

	/**
	 * A number that identifies an instance as long as its host and port stay the same
	 * (the base of its points), to derive per-instance values of a key.
	 * @param position a position the ring was built with
	 * @return the hash of the instance's host and port
	 */
	long base(int position) {
		return this.bases[position];
	}

	/**
	 * An entry (tests).
	 * @param index {@code 0 <= index < size()}
	 * @return the point's upper bits and the position
	 */
	long entry(int index) {
		return this.entries[index];
	}

	/**
	 * The memory this ring holds, in points (8 bytes each): its entries, bucket index and
	 * bases.
	 * @return {@code >= size()}
	 */
	int weight() {
		return this.entries.length + this.bucketStarts.length / 2 + this.bases.length;
	}

	/**
	 * Number of points.
	 * @return {@code >= 1}
	 */
	int size() {
		return this.entries.length;
	}

}
