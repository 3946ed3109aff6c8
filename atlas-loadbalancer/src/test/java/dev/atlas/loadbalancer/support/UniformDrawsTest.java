package dev.atlas.loadbalancer.support;

import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * A uniform draw covers [0, 1) from its lowest to its highest 64-bit value and is the
 * draw of {@code SplittableRandom.nextDouble()}.
 */
class UniformDrawsTest {

	@Test
	void theExtremeDrawsAreZeroAndJustBelowOne() {
		assertThat(UniformDraws.unit(fixed(0L))).isZero();
		assertThat(UniformDraws.unit(fixed(-1L))).isLessThan(1.0).isEqualTo(1.0 - 0x1.0p-53);
		assertThat(UniformDraws.unit(fixed(Long.MIN_VALUE))).isEqualTo(0.5);
	}

	@Test
	void itIsTheDrawOfSplittableRandom() {
		SplittableRandom expected = new SplittableRandom(42);
		SplittableRandom drawn = new SplittableRandom(42);
		for (int i = 0; i < 1_000; i++) {
			assertThat(UniformDraws.unit(drawn)).isEqualTo(expected.nextDouble());
		}
	}

	@Test
	void itsMeanIsOneHalf() {
		// seed 7, 100,000 draws: the standard error of the mean is 0.0009; tolerance
		// 0.005
		SplittableRandom random = new SplittableRandom(7);
		double sum = 0;
		for (int i = 0; i < 100_000; i++) {
			sum += UniformDraws.unit(random);
		}
		assertThat(sum / 100_000).isCloseTo(0.5, within(0.005));
	}

	private static RandomGenerator fixed(long value) {
		return () -> value;
	}

}
