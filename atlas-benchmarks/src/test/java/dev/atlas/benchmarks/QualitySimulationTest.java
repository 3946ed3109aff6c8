package dev.atlas.benchmarks;

import dev.atlas.benchmarks.QualitySimulation.Line;
import dev.atlas.benchmarks.QualitySimulation.RampPoint;
import dev.atlas.benchmarks.QualitySimulation.Report;
import dev.atlas.benchmarks.QualitySimulation.Scenario;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class QualitySimulationTest {

	private static Report report;

	@BeforeAll
	static void simulate() throws Exception {
		report = QualitySimulation.run(QualitySimulation.PICKS, QualitySimulation.SEED);
	}

	@Test
	void everyWeightedStrategyIsWithinTwoPointsOfItsConfiguredShares() {
		Scenario weights = report.scenarios().get(0);
		assertThat(weights.lines().stream().filter(Line::weighted)).hasSize(4);
		for (Line line : weights.lines()) {
			assertThat(line.error()).as(line.strategy()).isNull();
			if (line.weighted()) {
				assertThat(line.maxDeviationPoints()).as(line.strategy()).isLessThanOrEqualTo(2.0);
			}
		}
	}

	@Test
	void atlasDrainsAWeightOfZero() {
		Scenario drained = report.scenarios().get(1);
		for (Line line : drained.lines()) {
			if (line.strategy().startsWith("Atlas")) {
				assertThat(line.shares().get(0).observed()).as(line.strategy()).isZero();
				assertThat(line.maxDeviationPoints()).as(line.strategy()).isLessThanOrEqualTo(2.0);
			}
		}
	}

	@Test
	void slowStartFollowsTheConfiguredRamp() {
		assertThat(report.ramp()).extracting(RampPoint::percent).containsExactly(0, 10, 25, 50, 75, 100);
		double previous = 0;
		for (RampPoint point : report.ramp()) {
			assertThat(point.factor()).isEqualTo(WarmupRules.DEFAULTS.factor(point.ageMillis()));
			assertThat(point.factor()).isGreaterThanOrEqualTo(previous).isGreaterThanOrEqualTo(0.1);
			assertThat(point.observedShare() * 100).as("observed share at " + point.percent() + " %")
				.isCloseTo(point.expectedShare() * 100, within(2.0));
			previous = point.factor();
		}
		assertThat(report.ramp().get(0).factor()).isEqualTo(0.1);
		assertThat(report.ramp().get(3).factor()).isEqualTo(0.5);
		assertThat(report.ramp().get(5).factor()).isEqualTo(1.0);
	}

	@Test
	void isDeterministic() throws Exception {
		// Seeding Nacos's ThreadLocalRandom relies on JDK internals; on a JDK that
		// refuses, only this check is skipped.
		assumeTrue(report.scenarios().stream().flatMap((s) -> s.lines().stream()).allMatch(Line::seeded),
				"ThreadLocalRandom could not be seeded on this JDK");
		Report again = QualitySimulation.run(QualitySimulation.PICKS, QualitySimulation.SEED);
		assertThat(again.markdown()).isEqualTo(report.markdown());
	}

}
