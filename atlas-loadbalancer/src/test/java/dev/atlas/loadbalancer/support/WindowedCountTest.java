package dev.atlas.loadbalancer.support;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A window of 10 s: 10 slices of 1 s. */
class WindowedCountTest {

	private static final long SECOND = 1_000_000_000L;

	private static final long START = 7 * SECOND;

	private final WindowedCount count = new WindowedCount(10 * SECOND, START);

	@Test
	void countsOverTheCurrentSliceAndTheNinePrevious() {
		for (int s = 0; s < 10; s++) {
			this.count.add(1, START + s * SECOND);
		}
		assertThat(this.count.sum(START + 9 * SECOND)).isEqualTo(10);
		// the slice of second 0 leaves the window at second 10
		assertThat(this.count.sum(START + 10 * SECOND)).isEqualTo(9);
		assertThat(this.count.sum(START + 19 * SECOND)).isZero();
	}

	@Test
	void aSliceIsReadByItsEpochAndTheLastSlicesSumToTheWindow() {
		for (int s = 0; s < 12; s++) {
			for (int i = 0; i <= s; i++) {
				this.count.add(1, START + s * SECOND);
			}
		}
		long now = START + 11 * SECOND + SECOND / 2;
		long current = this.count.epoch(now);
		long sum = 0;
		for (int age = 0; age < WindowedCount.SLICES; age++) {
			// second 11 - age counted 12 - age events
			assertThat(this.count.count(current - age)).as("age %d", age).isEqualTo(12 - age);
			sum += this.count.count(current - age);
		}
		assertThat(sum).isEqualTo(this.count.sum(now));
		// the slice of second 1 was reused for second 11
		assertThat(this.count.count(current - 10)).isZero();
		// a count created with the same window and time has the same epochs
		assertThat(new WindowedCount(10 * SECOND, START).epoch(now)).isEqualTo(current);
		// a slice not written in its epoch, a later one, and one before the first count
		// nothing
		assertThat(this.count.count(this.count.epoch(START + 25 * SECOND) - 3)).isZero();
		assertThat(this.count.count(current + 1)).isZero();
		assertThat(this.count.count(0)).isZero();
	}

	@Test
	void theTimeCoveredGrowsFromTheStartThenFollowsTheSlices() {
		assertThat(this.count.coveredNanos(START + SECOND / 2)).isEqualTo(SECOND / 2);
		assertThat(this.count.coveredNanos(START + 5 * SECOND)).isEqualTo(5 * SECOND);
		// nine whole slices and the current one so far: 9.25 s, then 9.75 s
		assertThat(this.count.coveredNanos(START + 30 * SECOND + SECOND / 4)).isEqualTo(9 * SECOND + SECOND / 4);
		assertThat(this.count.coveredNanos(START + 30 * SECOND + 3 * SECOND / 4))
			.isEqualTo(9 * SECOND + 3 * SECOND / 4);
	}

	@Test
	void aSliceReusedForALaterEpochStartsFromZero() {
		this.count.add(1, START);
		this.count.add(1, START);
		this.count.add(1, START + 10 * SECOND);
		assertThat(this.count.sum(START + 10 * SECOND)).isEqualTo(1);
	}

	@Test
	void aWriterAWholeWindowLateDoesNotWipeANewerSlice() {
		this.count.add(1, START + 10 * SECOND);
		this.count.add(1, START + 10 * SECOND);
		// same slice, ten epochs earlier
		this.count.add(1, START);
		assertThat(this.count.sum(START + 10 * SECOND)).isEqualTo(2);
	}

	@Test
	void aCountNeverGoesBelowZero() {
		this.count.add(-1, START);
		assertThat(this.count.sum(START)).isZero();
		this.count.add(1, START);
		assertThat(this.count.sum(START)).isEqualTo(1);
	}

	@Test
	void aTimeBeforeTheFirstSliceCountsInIt() {
		this.count.add(1, START - 5 * SECOND);
		assertThat(this.count.sum(START)).isEqualTo(1);
	}

}
