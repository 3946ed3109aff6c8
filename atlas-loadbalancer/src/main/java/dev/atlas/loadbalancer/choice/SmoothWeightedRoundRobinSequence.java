package dev.atlas.loadbalancer.choice;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One period of the smooth weighted round robin sequence of nginx
 * ({@code ngx_http_upstream_get_peer}): at every step each instance's current weight
 * grows by its weight, the instance with the largest current weight is picked (ties go to
 * the earliest in list order) and its current weight drops by Σw. For integer weights the
 * sequence repeats every Σw picks and every period contains each instance exactly w
 * times; weights 5, 1, 1 give {@code a a b a c a a}.
 *
 * <p>
 * Weights are turned into integers first: multiplied by {@value #SCALE} (three decimals,
 * enough for Nacos weights such as {@code 0.5} or {@code 6.0}), rounded (a positive
 * weight keeps at least 1 unit) and divided by their greatest common divisor. When the
 * period would exceed {@value #MAX_PERIOD} picks the units are scaled down to fit, which
 * changes any share by less than one part in {@value #MAX_PERIOD}; with more positive
 * instances than that, the period is their count.
 *
 * <p>
 * Building costs O(period × distinct weights): instances of equal weight take turns in
 * list order (they do in nginx too), so a step compares one candidate per distinct
 * weight. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class SmoothWeightedRoundRobinSequence {

	/** Fixed-point scale applied to weights before they are made integers. */
	public static final int SCALE = 1000;

	/** Longest precomputed period (in picks) before weights are scaled down. */
	public static final int MAX_PERIOD = 1 << 16;

	private final int[] sequence;

	private SmoothWeightedRoundRobinSequence(int[] sequence) {
		this.sequence = sequence;
	}

	/**
	 * Computes one period.
	 * @param weights finite weights {@code >= 0}, at least one positive; not modified
	 * @return the sequence
	 * @throws IllegalArgumentException if no weight is positive or a weight is negative
	 * or not finite
	 */
	public static SmoothWeightedRoundRobinSequence of(double[] weights) {
		long[] units = integerUnits(weights);
		long period = Arrays.stream(units).sum();
		// Group instances by weight; equal weights take turns in list order.
		Map<Long, int[]> groups = new LinkedHashMap<>();
		for (int i = 0; i < units.length; i++) {
			if (units[i] > 0) {
				int[] members = groups.get(units[i]);
				members = (members != null) ? appended(members, i) : new int[] { i };
				groups.put(units[i], members);
			}
		}
		long[] groupWeight = new long[groups.size()];
		int[][] groupMembers = new int[groups.size()][];
		int g = 0;
		for (Map.Entry<Long, int[]> entry : groups.entrySet()) {
			groupWeight[g] = entry.getKey();
			groupMembers[g] = entry.getValue();
			g++;
		}
		long[] groupPicks = new long[groupWeight.length];
		int[] sequence = new int[(int) period];
		for (int step = 1; step <= period; step++) {
			int bestGroup = -1;
			int bestIndex = Integer.MAX_VALUE;
			long bestCurrent = Long.MIN_VALUE;
			for (int k = 0; k < groupWeight.length; k++) {
				int[] members = groupMembers[k];
				long picks = groupPicks[k];
				// The member whose turn it is has been picked picks / members.length
				// times so far; its
				// current weight after this step's increase is step * w - period * (its
				// picks).
				int candidate = members[(int) (picks % members.length)];
				long current = step * groupWeight[k] - period * (picks / members.length);
				if (current > bestCurrent || (current == bestCurrent && candidate < bestIndex)) {
					bestCurrent = current;
					bestIndex = candidate;
					bestGroup = k;
				}
			}
			sequence[step - 1] = bestIndex;
			groupPicks[bestGroup]++;
		}
		return new SmoothWeightedRoundRobinSequence(sequence);
	}

	static long[] integerUnits(double[] weights) {
		long[] units = new long[weights.length];
		long gcd = 0;
		long total = 0;
		int positive = 0;
		for (int i = 0; i < weights.length; i++) {
			double weight = weights[i];
			if (!(weight >= 0) || Double.isInfinite(weight)) {
				throw new IllegalArgumentException("weights must be finite and >= 0, found " + weight);
			}
			if (weight > 0) {
				units[i] = Math.max(1L, Math.round(Math.min(weight, 1e9) * SCALE));
				gcd = gcd(gcd, units[i]);
				positive++;
			}
		}
		if (positive == 0) {
			throw new IllegalArgumentException("at least one weight must be positive");
		}
		for (int i = 0; i < units.length; i++) {
			units[i] /= gcd;
			total += units[i];
		}
		if (total > MAX_PERIOD && total > positive) {
			double factor = (double) Math.max(MAX_PERIOD, positive) / total;
			for (int i = 0; i < units.length; i++) {
				if (units[i] > 0) {
					units[i] = Math.max(1L, Math.round(units[i] * factor));
				}
			}
		}
		return units;
	}

	private static long gcd(long a, long b) {
		while (b != 0) {
			long t = a % b;
			a = b;
			b = t;
		}
		return a;
	}

	private static int[] appended(int[] array, int value) {
		int[] copy = Arrays.copyOf(array, array.length + 1);
		copy[array.length] = value;
		return copy;
	}

	/**
	 * Length of one period.
	 * @return the sum of the integer weights, {@code >= 1}
	 */
	public int period() {
		return this.sequence.length;
	}

	/**
	 * The instance picked at a position of the (infinitely repeated) sequence.
	 * @param position any {@code long}; negative values wrap like positive ones
	 * @return an index into the weights the sequence was built from
	 */
	public int at(long position) {
		return this.sequence[(int) Math.floorMod(position, (long) this.sequence.length)];
	}

}
