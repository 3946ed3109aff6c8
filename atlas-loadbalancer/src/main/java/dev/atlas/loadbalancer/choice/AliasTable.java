package dev.atlas.loadbalancer.choice;

import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.support.UniformDraws;

/**
 * Vose's alias method (M. D. Vose, "A linear algorithm for generating random numbers with
 * a given distribution", IEEE TSE 17(9), 1991): O(n) to build, O(1) and one random number
 * per sample.
 *
 * <p>
 * Only positive weights get a column, so drained instances (weight 0) can never be
 * sampled. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class AliasTable {

	private final double[] threshold;

	private final int[] primary;

	private final int[] alternate;

	private AliasTable(double[] threshold, int[] primary, int[] alternate) {
		this.threshold = threshold;
		this.primary = primary;
		this.alternate = alternate;
	}

	/**
	 * Builds the table.
	 * @param weights finite weights {@code >= 0}, at least one positive; not modified
	 * @return the table
	 * @throws IllegalArgumentException if no weight is positive or a weight is negative
	 * or not finite
	 */
	public static AliasTable of(double[] weights) {
		int columns = 0;
		double total = 0;
		for (double weight : weights) {
			if (!(weight >= 0) || Double.isInfinite(weight)) {
				throw new IllegalArgumentException("weights must be finite and >= 0, found " + weight);
			}
			if (weight > 0) {
				columns++;
				total += weight;
			}
		}
		if (columns == 0) {
			throw new IllegalArgumentException("at least one weight must be positive");
		}
		int[] primary = new int[columns];
		double[] scaled = new double[columns];
		int column = 0;
		for (int i = 0; i < weights.length; i++) {
			if (weights[i] > 0) {
				primary[column] = i;
				scaled[column] = weights[i] * columns / total;
				column++;
			}
		}
		double[] threshold = new double[columns];
		int[] alternate = new int[columns];
		// Work lists of columns below and above the average, as index stacks.
		int[] small = new int[columns];
		int[] large = new int[columns];
		int smallSize = 0;
		int largeSize = 0;
		for (int c = 0; c < columns; c++) {
			if (scaled[c] < 1.0) {
				small[smallSize++] = c;
			}
			else {
				large[largeSize++] = c;
			}
		}
		while (smallSize > 0 && largeSize > 0) {
			int less = small[--smallSize];
			int more = large[--largeSize];
			threshold[less] = scaled[less];
			alternate[less] = primary[more];
			scaled[more] = (scaled[more] + scaled[less]) - 1.0;
			if (scaled[more] < 1.0) {
				small[smallSize++] = more;
			}
			else {
				large[largeSize++] = more;
			}
		}
		// Leftovers are 1 up to rounding error.
		while (largeSize > 0) {
			int c = large[--largeSize];
			threshold[c] = 1.0;
			alternate[c] = primary[c];
		}
		while (smallSize > 0) {
			int c = small[--smallSize];
			threshold[c] = 1.0;
			alternate[c] = primary[c];
		}
		return new AliasTable(threshold, primary, alternate);
	}

	/**
	 * Samples an index with probability proportional to its weight.
	 * @param random source of randomness; used once
	 * @return an index into the weights the table was built from, whose weight is
	 * positive
	 */
	public int sample(RandomGenerator random) {
		int columns = this.threshold.length;
		double u = UniformDraws.unit(random) * columns;
		int column = (int) u;
		if (column >= columns) {
			column = columns - 1;
		}
		return (u - column < this.threshold[column]) ? this.primary[column] : this.alternate[column];
	}

}
