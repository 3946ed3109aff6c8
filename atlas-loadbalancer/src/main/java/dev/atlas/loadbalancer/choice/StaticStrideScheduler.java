package dev.atlas.loadbalancer.choice;

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
 * ({@value #MIN_RATIO} to {@value #MAX_RATIO}): a pick then visits at most 10 instances
 * on average (the scaled mean is at least a tenth of the scaled maximum). A weight of 0
 * excludes its instance. Why not an EDF queue: a shared priority queue needs a lock or a
 * retry loop on every pick, and a per-thread one loses the exact proportions; the stride
 * scheduler costs one atomic increment per visit and an {@code int} per instance.
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
		double scale = MAX_WEIGHT / max;
		int[] scaled = new int[weights.length];
		for (int i = 0; i < weights.length; i++) {
			if (weights[i] > 0) {
				double clamped = Math.max(floor, Math.min(weights[i], ceiling));
				scaled[i] = (int) Math.max(1, Math.min(MAX_WEIGHT, Math.round(clamped * scale)));
			}
		}
		return new StaticStrideScheduler(scaled, sequence);
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
