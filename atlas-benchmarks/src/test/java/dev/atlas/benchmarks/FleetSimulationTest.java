package dev.atlas.benchmarks;

import dev.atlas.benchmarks.FleetSimulation.Cap;
import dev.atlas.benchmarks.FleetSimulation.Fleet;
import dev.atlas.benchmarks.FleetSimulation.Policy;
import dev.atlas.benchmarks.FleetSimulation.Result;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The retry storm of {@link FleetSimulation} (seed 42; the model is in its Javadoc): 10
 * instances × 100 req/s, 800 req/s offered, 4 instances lost at 20 s, an edge with a
 * Retry of 3 in front of a service that calls the capped one with Atlas's retry; both run
 * Atlas with its retry budget, and the edge reads the middle service's overload marker
 * unless said otherwise. The capped instances cap their concurrency ({@link Fleet#STORM},
 * unless said otherwise, or {@link Fleet#WIDE}) or their rate
 * ({@link Fleet#RATE_LIMITED}).
 */
class FleetSimulationTest {

	private static final long SEED = 42L;

	@Test
	void withTheBudgetAloneAttemptsStayWithinRatioPlusTheMinimumAtEachOfTheTwoLayers() {
		Result result = FleetSimulation.run(Policy.BUDGET_WITHOUT_MARKER, SEED);
		for (int from = 0; from + 10 <= FleetSimulation.SECONDS; from++) {
			long attempts = Result.sum(result.attempts(), from, 10);
			long offered = Result.sum(result.offered(), from, 10);
			// the edge sends the middle at most 1.2 × offered + 100 requests, which send
			// the capped service at most 1.2 × that + 100 attempts (each budget holds
			// its bound over every window of whole seconds, see
			// assertWithinOneLayersBound)
			assertThat(attempts).as("attempts in [%d s, %d s)", from, from + 10)
				.isLessThanOrEqualTo((long) (1.2 * (1.2 * offered + 10 * 10)) + 10 * 10);
		}
		assertThat(result.budgetExhausted()).isPositive();
	}

	@Test
	void withTheOverloadMarkerAttemptsStayWithinOneLayersBound() {
		Result result = FleetSimulation.run(Policy.ATLAS, SEED);
		assertWithinOneLayersBound(result);
		int from = FleetSimulation.DROP_SECOND + 10;
		assertThat(Result.mean(result.attempts(), from))
			.isLessThan(Result.mean(FleetSimulation.run(Policy.BUDGET_WITHOUT_MARKER, SEED).attempts(), from));
	}

	@Test
	void withTheBudgetAndTheMarkerGoodputStaysNearTheCapacityLeft() {
		Result result = FleetSimulation.run(Policy.ATLAS, SEED);
		for (int from = FleetSimulation.DROP_SECOND + 10; from + 10 <= FleetSimulation.SECONDS; from += 10) {
			// 600 req/s left; random choice over fail-fast instances places about 94 %
			assertThat(Result.mean(result.goodput(), from)).as("goodput from %d s", from).isGreaterThan(550);
		}
	}

	@Test
	void withThePerInstanceLimitNoAttemptIsRefusedForLoadAndGoodputNearsTheCapacityLeft() {
		Result result = FleetSimulation.run(Policy.ATLAS_LIMIT, SEED);
		Result withoutLimit = FleetSimulation.run(Policy.ATLAS, SEED);
		for (int from = FleetSimulation.DROP_SECOND + 10; from + 10 <= FleetSimulation.SECONDS; from += 10) {
			double offered = Result.mean(result.offered(), from);
			// the middle service sends no attempt to a full instance: attempts are what
			// the 600 req/s left serve
			assertThat(Result.mean(result.attempts(), from)).as("attempts from %d s", from)
				.isLessThan(offered)
				.isLessThanOrEqualTo(Result.mean(result.goodput(), from) + 10);
			assertThat(Result.mean(result.goodput(), from)).as("goodput from %d s", from)
				.isGreaterThan(Result.mean(withoutLimit.goodput(), from))
				.isGreaterThan(575)
				// within 1 % of what perfect routing without later re-attempts serves
				.isGreaterThan(0.99 * FleetSimulation.lossBound(Fleet.STORM));
		}
	}

	@Test
	void onAWiderFleetTheLimitAndTheMarkerKeepAttemptsBoundedAndGoodputAbove590() {
		Result result = FleetSimulation.run(Policy.ATLAS_LIMIT, Fleet.WIDE, SEED);
		assertWithinOneLayersBound(result);
		for (int from = FleetSimulation.DROP_SECOND + 10; from + 10 <= FleetSimulation.SECONDS; from += 10) {
			assertThat(Result.mean(result.goodput(), from)).as("goodput from %d s", from).isGreaterThanOrEqualTo(590);
		}
		// the criterion of 590 is above what any policy serves on the narrower fleet
		assertThat(FleetSimulation.lossBound(Fleet.STORM)).isLessThan(590).isGreaterThan(585);
		assertThat(FleetSimulation.lossBound(Fleet.WIDE)).isGreaterThan(590);
	}

	@Test
	void onARateCappedFleetAtlasDefaultsKeepAttemptsBoundedAndGoodputAbove590() {
		Result result = FleetSimulation.run(Policy.ATLAS, Fleet.RATE_LIMITED, SEED);
		assertWithinOneLayersBound(result);
		for (int from = FleetSimulation.DROP_SECOND; from + 10 <= FleetSimulation.SECONDS; from++) {
			assertThat(Result.sum(result.goodput(), from, 10) / 10.0).as("goodput in [%d s, %d s)", from, from + 10)
				.isGreaterThanOrEqualTo(590);
		}
		// without a retry, the requests sent to the stopped instances before they leave
		// the list are lost: the first window after the loss falls below 590
		Result noRetries = FleetSimulation.run(Policy.NO_RETRIES, Fleet.RATE_LIMITED, SEED);
		assertThat(Result.mean(noRetries.goodput(), FleetSimulation.DROP_SECOND)).isLessThan(590);
		// the same fleet without the budget and the marker: twice and three and a half
		// times the offered load
		int from = FleetSimulation.DROP_SECOND + 10;
		Result springCloud = FleetSimulation.run(Policy.SPRING_CLOUD, Fleet.RATE_LIMITED, SEED);
		assertThat(Result.mean(springCloud.attempts(), from) / Result.mean(springCloud.offered(), from))
			.isGreaterThan(2);
		Result unbounded = FleetSimulation.run(Policy.ATLAS_UNBOUNDED, Fleet.RATE_LIMITED, SEED);
		assertThat(Result.mean(unbounded.attempts(), from) / Result.mean(unbounded.offered(), from)).isGreaterThan(3.4);
	}

	@Test
	void theLimitIsModelledOnlyWhereInstancesCapConcurrency() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> FleetSimulation.run(Policy.ATLAS_LIMIT, Fleet.RATE_LIMITED, SEED));
		assertThatIllegalArgumentException().isThrownBy(() -> new Fleet(Cap.RATE, 20, 200));
		assertThatIllegalArgumentException().isThrownBy(() -> new Fleet(Cap.CONCURRENCY, 20, 100));
	}

	@Test
	void withoutTheBudgetTheStormMultipliesTheOfferedLoad() {
		Result unbounded = FleetSimulation.run(Policy.ATLAS_UNBOUNDED, SEED);
		Result springCloud = FleetSimulation.run(Policy.SPRING_CLOUD, SEED);
		int from = FleetSimulation.DROP_SECOND + 10;
		assertThat(Result.mean(unbounded.attempts(), from) / Result.mean(unbounded.offered(), from)).isGreaterThan(4);
		assertThat(Result.mean(springCloud.attempts(), from) / Result.mean(springCloud.offered(), from))
			.isGreaterThan(2.4);
		Result budgeted = FleetSimulation.run(Policy.BUDGET_WITHOUT_MARKER, SEED);
		assertThat(Result.mean(budgeted.attempts(), from) / Result.mean(budgeted.offered(), from)).isLessThan(1.25);
	}

	@Test
	void atLowTrafficAndFewFailuresEveryRetryIsAllowed() {
		// 5 req/s, 5 % of attempts failing with a 503
		Result result = FleetSimulation.runCalm(Policy.ATLAS, SEED, 5, 0.05);
		assertThat(result.budgetExhausted()).isZero();
		long offered = Result.sum(result.offered(), 0, FleetSimulation.SECONDS);
		long attempts = Result.sum(result.attempts(), 0, FleetSimulation.SECONDS);
		// about 5 % of the requests retried once
		assertThat(attempts - offered).isBetween((long) (0.02 * offered), (long) (0.09 * offered));
	}

	/**
	 * Attempts at the capped service within {@code 1.2 × offered + 10/s} over every 10 s
	 * window of whole seconds. The budgets' 1 s slices line up with those windows, and a
	 * budget refuses a retry that would take any trailing part of its window over
	 * {@code ratio × requests + reserve}, so no such window holds more retries than its
	 * own requests allow; with the marker, the edge retries only a refused connection.
	 */
	private static void assertWithinOneLayersBound(Result result) {
		for (int from = 0; from + 10 <= FleetSimulation.SECONDS; from++) {
			long attempts = Result.sum(result.attempts(), from, 10);
			long offered = Result.sum(result.offered(), from, 10);
			assertThat(attempts).as("attempts in [%d s, %d s)", from, from + 10)
				.isLessThanOrEqualTo((long) (1.2 * offered) + 10 * 10);
		}
	}

}
