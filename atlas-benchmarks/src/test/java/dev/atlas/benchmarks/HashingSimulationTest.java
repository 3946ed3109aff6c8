package dev.atlas.benchmarks;

import dev.atlas.benchmarks.HashingSimulation.Balance;
import dev.atlas.benchmarks.HashingSimulation.Movement;
import dev.atlas.benchmarks.HashingSimulation.Report;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ring-hash}: keys moved on join / leave, and bounded load (seed 42; the model is
 * in {@link HashingSimulation}'s Javadoc). About 1 s.
 */
class HashingSimulationTest {

	private static Report report;

	@BeforeAll
	static void simulate() {
		report = HashingSimulation.run(HashingSimulation.SEED);
	}

	@Test
	void oneInstanceJoiningOrLeavingMovesAtMostOneNthOfTheKeysPlusTwoPoints() {
		assertThat(report.movements()).extracting(Movement::instances).containsExactly(5, 5, 10, 10, 50, 50);
		for (Movement movement : report.movements()) {
			double bound = 1.0 / movement.instances() + 0.02;
			assertThat(movement.moved()).as(movement.toString()).isPositive().isLessThanOrEqualTo(bound);
			if (!movement.join() && movement.instances() >= 50) {
				// Whichever instance leaves (at N = 10 the largest share is about 12 %,
				// at
				// the bound: see below).
				assertThat(movement.maxMoved()).as(movement.toString()).isLessThanOrEqualTo(bound);
			}
		}
	}

	@Test
	void withFiveInstancesTheLargestShareExceedsOneNthPlusTwoPoints() {
		// 160 points per instance give each of 5 instances 20 % ± 1.6 points (one
		// standard deviation, 1 / sqrt(160) of the share): the largest of five is often
		// more than 2 points over, so the target "≤ 1/N + 2 points" does not hold for
		// every instance at N = 5 (nor, by a fraction of a point at other seeds, at N =
		// 10; it does at N = 50). Asserted so that the documentation's figure stays true.
		Movement five = report.movements().get(0);
		assertThat(five.join()).isFalse();
		assertThat(five.maxMoved()).isGreaterThan(0.22).isLessThan(0.20 + 4 * 0.016);
	}

	@Test
	void onlyTheKeysOfTheInstanceThatJoinsOrLeavesMove() {
		for (Movement movement : report.movements()) {
			assertThat(movement.movedBetweenStayers()).as(movement.toString()).isZero();
		}
	}

	@Test
	void boundedLoadKeepsEveryInstanceWithinItsBoundAtEveryStep() {
		assertThat(report.balances()).filteredOn(Balance::bounded).hasSize(2).allSatisfy((balance) -> {
			assertThat(balance.stepsOverBound()).as(balance.workload()).isZero();
			assertThat(balance.maxOverMean()).as(balance.workload()).isLessThanOrEqualTo(1.25);
		});
	}

	@Test
	void withoutBoundedLoadTheHotKeyOverloadsOneInstance() {
		// What the bound is for: the workload does overload an instance without it.
		Balance hot = report.balances().get(2);
		assertThat(hot.bounded()).isFalse();
		assertThat(hot.hottestKeyShare()).isGreaterThan(0.15);
		assertThat(hot.maxOverMean()).isGreaterThan(2.0);
	}

	@Test
	void isDeterministic() {
		assertThat(HashingSimulation.run(HashingSimulation.SEED)).isEqualTo(report);
	}

}
