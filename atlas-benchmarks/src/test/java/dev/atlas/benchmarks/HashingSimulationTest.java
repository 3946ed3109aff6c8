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
			assertThat(movement.moved()).as(movement.toString())
				.isPositive()
				.isLessThanOrEqualTo(1.0 / movement.instances() + 0.02);
		}
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
