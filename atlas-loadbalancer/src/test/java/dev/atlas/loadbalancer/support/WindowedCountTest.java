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
