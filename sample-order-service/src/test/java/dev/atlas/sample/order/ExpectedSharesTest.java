package dev.atlas.sample.order;

import java.util.List;
import java.util.Map;

import dev.atlas.sample.order.ExpectedShares.Candidate;
import org.junit.jupiter.api.Test;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class ExpectedSharesTest {

	static final List<Candidate> FLEET = List.of(new Candidate("a:1", "v1", 1), new Candidate("b:1", "V1", 3),
			new Candidate("c:1", "v2", 1), new Candidate("d:1", "v2", 3), new Candidate("e:1", null, 4));

	static Map<String, Double> shares(MockEnvironment environment) {
		return new ExpectedShares(environment).untagged("user-service", FLEET);
	}

	@Test
	void untaggedCallsReachOnlyUntaggedInstancesByDefault() {
		assertThat(shares(new MockEnvironment())).containsOnly(Map.entry("a:1", 0.0), Map.entry("b:1", 0.0),
				Map.entry("c:1", 0.0), Map.entry("d:1", 0.0), Map.entry("e:1", 1.0));
	}

	@Test
	void baselineTagsJoinTheBaselineLaneByWeight() {
		Map<String, Double> shares = shares(new MockEnvironment().withProperty("atlas.gray.baseline-tags", "V1"));

		assertThat(shares.get("a:1")).isCloseTo(1 / 8.0, within(1e-9));
		assertThat(shares.get("b:1")).isCloseTo(3 / 8.0, within(1e-9));
		assertThat(shares.get("e:1")).isCloseTo(4 / 8.0, within(1e-9));
		assertThat(shares.get("c:1")).isZero();
		assertThat(shares.get("d:1")).isZero();
	}

	@Test
	void aPercentageCanaryTakesItsShareAndTheBaselineTheRest() {
		Map<String, Double> shares = shares(new MockEnvironment().withProperty("atlas.gray.baseline-tags", "v1")
			.withProperty("atlas.services.user-service.gray.weights.v2", "10")
			.withProperty("atlas.services.user-service.gray.weights.v9", "20"));

		// v9 has no instance: its 20 % stay in the baseline lane
		assertThat(shares.get("c:1")).isCloseTo(0.10 / 4, within(1e-9));
		assertThat(shares.get("d:1")).isCloseTo(0.10 * 3 / 4, within(1e-9));
		assertThat(shares.get("b:1")).isCloseTo(0.90 * 3 / 8, within(1e-9));
		assertThat(shares.values().stream().mapToDouble(Double::doubleValue).sum()).isCloseTo(1.0, within(1e-9));
	}

	@Test
	void perServiceSettingsWinOverGlobalOnes() {
		Map<String, Double> shares = shares(new MockEnvironment().withProperty("atlas.gray.baseline-tags", "v2")
			.withProperty("atlas.services.user-service.gray.baseline-tags", "v1")
			.withProperty("atlas.gray.weights.v2", "50")
			.withProperty("atlas.services.user-service.gray.weights.v2", "20"));

		assertThat(shares.get("c:1") + shares.get("d:1")).isCloseTo(0.20, within(1e-9));
		assertThat(shares.get("a:1") + shares.get("b:1") + shares.get("e:1")).isCloseTo(0.80, within(1e-9));
	}

	@Test
	void withoutIsolationOrWithoutGrayEveryInstanceCountsByWeight() {
		for (MockEnvironment environment : List.of(
				new MockEnvironment().withProperty("atlas.gray.isolate-baseline", "false"),
				new MockEnvironment().withProperty("atlas.gray.enabled", "false"),
				new MockEnvironment().withProperty("atlas.enabled", "false"))) {
			Map<String, Double> shares = shares(environment);
			assertThat(shares.get("a:1")).isCloseTo(1 / 12.0, within(1e-9));
			assertThat(shares.get("d:1")).isCloseTo(3 / 12.0, within(1e-9));
		}
	}

	@Test
	void aLaneWhoseWeightsAreAllZeroIsSplitEvenly() {
		Map<String, Double> shares = new ExpectedShares(new MockEnvironment()).untagged("s",
				List.of(new Candidate("a:1", "", 0), new Candidate("b:1", "", -2)));

		assertThat(shares).containsOnly(Map.entry("a:1", 0.5), Map.entry("b:1", 0.5));
	}

}
