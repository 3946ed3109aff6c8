package dev.atlas.benchmarks;

import java.util.ArrayList;
import java.util.List;

import dev.atlas.benchmarks.CapacitySimulation.Contender;
import dev.atlas.benchmarks.CapacitySimulation.Result;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CapacitySimulation}, seed 42: {@code weighted-round-robin} keeps the utilization
 * of every instance within 10 points of the others, where round robin, which ignores
 * capacity, does not (the comparison shows the check can fail).
 */
class CapacitySimulationTest {

	@Test
	void weightedRoundRobinKeepsEveryInstanceEquallyUtilized() {
		List<Result> results = new ArrayList<>();
		for (Contender contender : Contender.values()) {
			results.add(CapacitySimulation.run(contender, CapacitySimulation.SEED));
		}
		System.out.println(CapacitySimulation.markdown(results));
		Result wrr = results.get(Contender.WEIGHTED_ROUND_ROBIN.ordinal());
		assertThat(wrr.utilizationSpread()).as("weighted-round-robin's utilization spread").isLessThanOrEqualTo(0.10);
		// a half-capacity instance's share of the capacity: 0.5 of 4
		assertThat(wrr.shares()[3]).isBetween(0.105, 0.145);
		assertThat(wrr.shares()[4]).isBetween(0.105, 0.145);
		Result roundRobin = results.get(Contender.SMOOTH_ROUND_ROBIN.ordinal());
		assertThat(roundRobin.utilizationSpread()).as("round robin's utilization spread").isGreaterThan(0.30);
	}

}
