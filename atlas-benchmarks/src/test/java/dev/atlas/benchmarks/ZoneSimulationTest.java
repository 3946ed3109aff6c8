package dev.atlas.benchmarks;

import dev.atlas.benchmarks.ZoneSimulation.Mode;
import dev.atlas.benchmarks.ZoneSimulation.Result;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Zone-aware routing in {@link ZoneSimulation} (seed 42, 600,000 requests per run; the
 * tolerances cover the random draws, whose relative spread per provider is below 1 %).
 */
class ZoneSimulationTest {

	private static final long SEED = 42L;

	@Test
	void callersSixAndSixProvidersTwoAndTenEveryProviderEquallyLoadedWithTheLeastCrossZoneTraffic() {
		Result proportional = ZoneSimulation.run(Mode.PROPORTIONAL, 6, 6, 2, 10, 2, SEED);
		boolean[] all = ZoneSimulation.healthy(2, 10, 2);
		assertThat(proportional.maxOverMean(all)).isLessThanOrEqualTo(1.10);
		// the minimum for equal load: zone a's callers (half the demand) send 2/3 away
		assertThat(proportional.crossZone()).isCloseTo(1 / 3.0, within(0.02));
		Result threshold = ZoneSimulation.run(Mode.THRESHOLD, 6, 6, 2, 10, 2, SEED);
		assertThat(threshold.maxOverMean(all)).as("all-or-nothing: zone a's two take half the demand")
			.isCloseTo(3.0, within(0.1));
		assertThat(threshold.crossZone()).isZero();
	}

	@Test
	void callersAndProvidersSpreadAlikeStayInTheirZone() {
		Result proportional = ZoneSimulation.run(Mode.PROPORTIONAL, 6, 6, 6, 6, 6, SEED);
		assertThat(proportional.crossZone()).isLessThanOrEqualTo(0.01);
		assertThat(proportional.maxOverMean(ZoneSimulation.healthy(6, 6, 6))).isLessThanOrEqualTo(1.10);
	}

	@Test
	void aZoneLosingItsProvidersOneByOneShedsItsTrafficGradually() {
		double normal = ZoneSimulation.meanLoadA(ZoneSimulation.run(Mode.PROPORTIONAL, 6, 6, 10, 10, 10, SEED), 10);
		double previous = 1;
		for (int healthyA = 10; healthyA >= 0; healthyA--) {
			Result result = ZoneSimulation.run(Mode.PROPORTIONAL, 6, 6, 10, 10, healthyA, SEED);
			double expected = Math.min(1, 1.4 * healthyA / 10);
			assertThat(result.localShareA()).as("local share with %d of 10 healthy", healthyA)
				.isCloseTo(expected, within(0.03));
			assertThat(previous - result.localShareA()).as("step to %d healthy", healthyA).isLessThanOrEqualTo(0.15);
			if (healthyA > 0) {
				assertThat(ZoneSimulation.maxLoadA(result, healthyA) / normal)
					.as("a surviving provider's load with %d of 10 healthy", healthyA)
					.isLessThanOrEqualTo(1.45);
			}
			previous = result.localShareA();
		}
		// all-or-nothing: everything stays while one provider is left (min-instances 1;
		// ejected instances never reach the affinity filter, which runs after ejection,
		// so min-healthy-ratio does not see them), then everything leaves
		assertThat(ZoneSimulation.run(Mode.THRESHOLD, 6, 6, 10, 10, 1, SEED).localShareA()).isEqualTo(1.0);
		assertThat(ZoneSimulation.run(Mode.THRESHOLD, 6, 6, 10, 10, 0, SEED).localShareA()).isZero();
	}

}
