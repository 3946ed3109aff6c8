package dev.atlas.loadbalancer.choice;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * gRPC's static stride scheduler (gRFC A58, {@code weighted_round_robin}): an earliest
 * deadline first schedule computed from the sequence number alone, so that concurrent
 * picks share one counter and no queue. Weights are scaled to integers up to
 * {@value #MAX_WEIGHT}; the pick with sequence number {@code s} visits instance
 * {@code i = s mod n} in generation {@code g = s div n} and takes it when
 * {@code (w_i × g + offset_i) mod MAX >= MAX − w_i}, else moves on to {@code s + 1}: over
 * a period each instance is taken in proportion to its weight, the heaviest at every
 * visit, and the per-instance offset ({@code MAX ÷ 2 × i}) spreads the lighter ones'
 * turns.
 *
 * <p>
 * As in A58, weights are clamped to the mean of the positive ones times 0.1 to 10
 * ({@value #MIN_RATIO} to {@value #MAX_RATIO}). A58's single clamp still lets the largest
 * weight reach 100 times the smallest, and a pick visits about max ÷ mean instances (50
 * with 100 instances, one of them far heavier), so Atlas then lowers the largest weights
 * to a common cap at which none exceeds 10 times the mean of the clamped weights
 * (water-filling, exact): a pick visits at most 10 instances on average, whatever the
 * reports. A weight of 0 excludes its instance. Why not an EDF queue: a shared priority
 * queue needs a lock or a retry loop on every pick, and a per-thread one loses the exact
 * proportions; the stride scheduler costs one atomic increment per visit and an
 * {@code int} per instance.
 *
 * <p>
 * Immutable but for the shared sequence; thread-safe and lock-free; a pick allocates
 * nothing.
 */
final class StaticStrideScheduler {

	/** The largest scaled weight. */
	static final int MAX_WEIGHT = 0xFFFF;

	/** Weights above the mean times this are lowered to it. */
	static final double MAX_RATIO = 10;

	/** Positive weights below the mean times this are raised to it. */
	static final double MIN_RATIO = 0.1;

	private final int[] scaled;

	private final AtomicLong sequence;

	private StaticStrideScheduler(int[] scaled, AtomicLong sequence) {
		this.scaled = scaled;
		this.sequence = sequence;
	}

	/**
	 * Builds a scheduler.
	 * @param weights one finite weight {@code >= 0} per instance, at least one positive;
	 * not modified
	 * @param sequence the sequence the picks take their numbers from, kept across
	 * schedulers of one candidate set
	 * @return the scheduler
	 * @throws IllegalArgumentException if no weight is positive
	 */
	static StaticStrideScheduler of(double[] weights, AtomicLong sequence) {
		double sum = 0;
		int positive = 0;
		for (double weight : weights) {
			if (weight > 0) {
				sum += weight;
				positive++;
			}
		}
		if (positive == 0) {
			throw new IllegalArgumentException("no positive weight");
		}
		double mean = sum / positive;
		double ceiling = mean * MAX_RATIO;
		double floor = mean * MIN_RATIO;
		double max = 0;
		for (double weight : weights) {
			if (weight > 0) {
				max = Math.max(max, Math.min(weight, ceiling));
			}
		}
		double[] clamped = new double[weights.length];
		for (int i = 0; i < weights.length; i++) {
			if (weights[i] > 0) {
				clamped[i] = Math.max(floor, Math.min(weights[i], ceiling));
			}
		}
		double cap = cap(clamped, positive);
		if (cap < max) {
			max = cap;
		}
		double scale = MAX_WEIGHT / max;
		int[] scaled = new int[weights.length];
		for (int i = 0; i < weights.length; i++) {
			if (clamped[i] > 0) {
				scaled[i] = (int) Math.max(1, Math.min(MAX_WEIGHT, Math.round(Math.min(clamped[i], cap) * scale)));
			}
		}
		return new StaticStrideScheduler(scaled, sequence);
	}

	/**
	 * The cap c at which the weights above it, lowered to it, leave no weight above
	 * {@value #MAX_RATIO} times the mean: with the k largest at c, c = 10 × (the others'
	 * sum + k × c) ÷ n, for the least k where that c lies between the (k+1)-th and the
	 * k-th largest weight. Infinite when no weight needs lowering.
	 * @param weights the clamped weights, {@code >= 0}
	 * @param n how many are positive
	 */
	static double cap(double[] weights, int n) {
		double[] sorted = Arrays.stream(weights).filter((w) -> w > 0).sorted().toArray();
		double total = Arrays.stream(sorted).sum();
		if (sorted.length == 0 || sorted[sorted.length - 1] <= MAX_RATIO * total / n) {
			return Double.POSITIVE_INFINITY;
		}
		double top = 0;
		for (int k = 1; k < n; k++) {
			top += sorted[n - k];
			double denominator = n - MAX_RATIO * k;
			if (denominator <= 0) {
				break;
			}
			double cap = MAX_RATIO * (total - top) / denominator;
			if (cap >= sorted[n - k - 1] && cap <= sorted[n - k]) {
				return cap;
			}
		}
		// not reached for positive weights; every weight equal is always within bounds
		return sorted[0];
	}

	/**
	 * Picks an instance.
	 * @return an index whose weight is positive
	 */
	int pick() {
		int[] weights = this.scaled;
		int n = weights.length;
		while (true) {
			long number = this.sequence.getAndIncrement() & Long.MAX_VALUE;
			int index = (int) (number % n);
			long generation = (number / n) % MAX_WEIGHT;
			int weight = weights[index];
			long offset = (long) (MAX_WEIGHT / 2) * index;
			if ((weight * generation + offset) % MAX_WEIGHT >= MAX_WEIGHT - weight) {
				return index;
			}
		}
	}

	/**
	 * The scaled weights (tests).
	 * @return a copy
	 */
	int[] scaledWeights() {
		return this.scaled.clone();
	}

}
