package dev.atlas.loadbalancer.support;

import java.util.random.RandomGenerator;

/**
 * A uniform value in [0, 1) from one 64-bit draw: the top 53 bits of {@code nextLong()},
 * scaled by 2<sup>-53</sup>, the construction of {@code SplittableRandom.nextDouble()}
 * and of the {@code java.util.random} algorithms. {@code ThreadLocalRandom.nextDouble()}
 * on JDK 17 is {@code java.util.Random}'s, which draws twice (26 and 27 bits), so this
 * halves the cost of a pick's draws with it. Stateless and thread-safe (as thread-safe as
 * the generator given).
 *
 * @since 0.1.0
 */
public final class UniformDraws {

	private static final double UNIT = 0x1.0p-53;

	private UniformDraws() {
	}

	/**
	 * One uniform value.
	 * @param random the generator; one {@code nextLong()} is drawn from it
	 * @return a value in [0, 1), a multiple of 2<sup>-53</sup>
	 */
	public static double unit(RandomGenerator random) {
		return (random.nextLong() >>> 11) * UNIT;
	}

}
