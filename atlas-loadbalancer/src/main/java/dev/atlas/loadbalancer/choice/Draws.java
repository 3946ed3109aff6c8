package dev.atlas.loadbalancer.choice;

import java.util.random.RandomGenerator;

/**
 * Random draws of candidates for the power-of-choices strategies, built once per
 * snapshot: each draw picks an instance with probability weight ÷ Σweight (uniformly when
 * the weights are equal, else from an {@link AliasTable}), so that with nothing to tell
 * candidates apart the choice is weighted random. Immutable and thread-safe.
 */
final class Draws {

	/** Redraws of a draw that repeats the instance it is compared with, at most. */
	private static final int REDRAWS = 4;

	/** Effective weights by position. */
	final double[] weights;

	private final AliasTable alias;

	private final boolean equal;

	Draws(double[] weights) {
		this.weights = weights;
		this.alias = AliasTable.of(weights);
		this.equal = equalPositive(weights);
	}

	/**
	 * Draws a position.
	 * @param random the source of randomness
	 * @return a position whose weight is positive
	 */
	int draw(RandomGenerator random) {
		return this.equal ? random.nextInt(this.weights.length) : this.alias.sample(random);
	}

	/**
	 * Draws a position other than {@code not} when one can be drawn: exactly, for equal
	 * weights; else by redrawing up to {@value #REDRAWS} times (a heavy instance may then
	 * be compared with itself, which keeps it).
	 * @param random the source of randomness
	 * @param not the position to avoid
	 * @return a position whose weight is positive
	 */
	int drawOther(RandomGenerator random, int not) {
		if (this.equal) {
			int drawn = random.nextInt(this.weights.length - 1);
			return (drawn >= not) ? drawn + 1 : drawn;
		}
		int drawn = this.alias.sample(random);
		for (int i = 0; drawn == not && i < REDRAWS; i++) {
			drawn = this.alias.sample(random);
		}
		return drawn;
	}

	/** Whether every weight is positive and equal (then a draw is one bounded int). */
	private static boolean equalPositive(double[] weights) {
		for (double weight : weights) {
			if (weight != weights[0] || !(weight > 0)) {
				return false;
			}
		}
		return true;
	}

}
