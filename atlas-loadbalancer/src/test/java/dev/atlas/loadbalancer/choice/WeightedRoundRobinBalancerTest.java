package dev.atlas.loadbalancer.choice;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import dev.atlas.loadbalancer.TestInstances;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.ReportedWeights;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class WeightedRoundRobinBalancerTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final Weights reported = new Weights();

	private final WeightedRoundRobinBalancer balancer = new WeightedRoundRobinBalancer(
			TestPickContext.settings(this.meters), this.reported);

	private final InstanceAttributesParser parser = new InstanceAttributesParser(TestInstances.SERVICE, "version",
			this.meters);

	@Test
	void picksInProportionToTheReportedWeights() {
		List<ServiceInstance> fleet = TestInstances.fleet(3);
		this.reported.set(fleet.get(0), 100).set(fleet.get(1), 100).set(fleet.get(2), 50).updated();
		assertThat(shares(InstanceSnapshot.of(fleet, this.parser), 25_000)).containsEntry("i0", 0.4)
			.containsEntry("i1", 0.4)
			.containsEntry("i2", 0.2);
	}

	@Test
	void anInstanceWithoutWeightGetsTheMeanOfTheOthers() {
		List<ServiceInstance> fleet = TestInstances.fleet(3);
		this.reported.set(fleet.get(0), 100).set(fleet.get(1), 200).updated();
		Map<String, Double> shares = shares(InstanceSnapshot.of(fleet, this.parser), 45_000);
		assertThat(shares.get("i0")).isCloseTo(100.0 / 450, within(1e-3));
		assertThat(shares.get("i1")).isCloseTo(200.0 / 450, within(1e-3));
		assertThat(shares.get("i2")).isCloseTo(150.0 / 450, within(1e-3));
	}

	@Test
	void withFewerThanTwoWeightsKnownEveryInstanceIsEqual() {
		List<ServiceInstance> fleet = TestInstances.fleet(3);
		this.reported.set(fleet.get(0), 1000).updated();
		assertThat(shares(InstanceSnapshot.of(fleet, this.parser), 30_000))
			.allSatisfy((id, share) -> assertThat(share).isCloseTo(1.0 / 3, within(1e-3)));
	}

	@Test
	void registryWeightsAreNotUsedButZeroStillDrains() {
		List<ServiceInstance> fleet = List.of(TestInstances.weighted("a", "5"), TestInstances.weighted("b", "1"),
				TestInstances.weighted("c", "0"));
		this.reported.set(fleet.get(0), 10).set(fleet.get(1), 10).set(fleet.get(2), 10).updated();
		Map<String, Double> shares = shares(InstanceSnapshot.of(fleet, this.parser), 20_000);
		assertThat(shares).containsOnlyKeys("a", "b");
		assertThat(shares.get("a")).isCloseTo(0.5, within(1e-3));
	}

	@Test
	void warmupsRampMultipliesTheReportedWeight() {
		List<ServiceInstance> fleet = TestInstances.fleet(2);
		this.reported.set(fleet.get(0), 100).set(fleet.get(1), 100).updated();
		InstanceSnapshot warming = InstanceSnapshot.of(fleet, this.parser)
			.withEffectiveWeights(new double[] { 1, 0.25 });
		Map<String, Double> shares = shares(warming, 25_000);
		assertThat(shares.get("i1")).isCloseTo(0.2, within(1e-3));
	}

	@Test
	void weightsAreClampedSoThatAPickVisitsAtMostTenInstancesOnAverage() {
		double[] weights = new double[21];
		Arrays.fill(weights, 1);
		weights[0] = 1000;
		weights[1] = 0.0001;
		AtomicLong sequence = new AtomicLong();
		StaticStrideScheduler scheduler = StaticStrideScheduler.of(weights, sequence);
		int[] scaled = scheduler.scaledWeights();
		// A58's clamp: mean 48.5, so 1000 to 485 and 1 and 0.0001 to 4.85 (100 to 1);
		// then the largest lowered to 88.2, 10 x the mean of the clamped weights
		assertThat(scaled[0]).isEqualTo(StaticStrideScheduler.MAX_WEIGHT);
		assertThat(scaled[2]).isEqualTo(scaled[1]);
		assertThat((double) scaled[1] / scaled[0]).isCloseTo(4.852 / 88.2, within(1e-3));
		double mean = Arrays.stream(scaled).average().orElseThrow();
		assertThat(scaled[0] / mean).isLessThanOrEqualTo(10.001);
		int picks = 100_000;
		int heavy = 0;
		for (int i = 0; i < picks; i++) {
			heavy += (scheduler.pick() == 0) ? 1 : 0;
		}
		assertThat((double) sequence.get() / picks).as("instances visited per pick").isLessThanOrEqualTo(10.01);
		assertThat((double) heavy / picks).isCloseTo(88.2 / (88.2 + 20 * 4.852), within(0.01));
	}

	@Test
	void weightsWithinTheBoundsAreKeptAsReported() {
		double[] weights = { 1, 2, 3, 9 };
		int[] scaled = StaticStrideScheduler.of(weights, new AtomicLong()).scaledWeights();
		assertThat((double) scaled[0] / scaled[3]).isCloseTo(1 / 9.0, within(1e-4));
		assertThat((double) scaled[1] / scaled[3]).isCloseTo(2 / 9.0, within(1e-4));
	}

	@Test
	void eachCandidateSetHasItsOwnScheduler() {
		// a lane, an affinity subset or what ejection left: another snapshot, another
		// table
		List<ServiceInstance> fleet = TestInstances.fleet(4);
		this.reported.set(fleet.get(0), 100)
			.set(fleet.get(1), 300)
			.set(fleet.get(2), 100)
			.set(fleet.get(3), 100)
			.updated();
		InstanceSnapshot all = InstanceSnapshot.of(fleet, this.parser);
		InstanceSnapshot subset = all.filter((i) -> i < 2);
		assertThat(shares(subset, 8_000)).containsEntry("i0", 0.25).containsEntry("i1", 0.75);
		assertThat(shares(all, 12_000)).containsEntry("i1", 0.5);
		assertThat(this.balancer.liveTables()).isEqualTo(2);
	}

	@Test
	void aRetrysShortLivedSetIsBuiltOnceAndNotRebuilt() {
		List<ServiceInstance> fleet = TestInstances.fleet(3);
		this.reported.set(fleet.get(0), 100).set(fleet.get(1), 100).set(fleet.get(2), 100).updated();
		InstanceSnapshot retry = InstanceSnapshot.of(fleet, this.parser).filter((i) -> i != 2).asShortLived();
		this.balancer.chooseIndex(retry);
		assertThat(this.balancer.liveTables()).as("a retry's set is not followed").isZero();
	}

	@Test
	void aRecomputationRebuildsTheTablesOfSnapshotsInUseOffTheRequestPath() {
		List<ServiceInstance> fleet = TestInstances.fleet(2);
		InstanceSnapshot snapshot = InstanceSnapshot.of(fleet, this.parser);
		this.balancer.chooseIndex(snapshot);
		assertThat(shares(snapshot, 10_000).get("i0")).isCloseTo(0.5, within(1e-3));
		this.reported.set(fleet.get(0), 300).set(fleet.get(1), 100).updated();
		assertThat(shares(snapshot, 10_000).get("i0")).isCloseTo(0.75, within(1e-3));
		assertThat(this.balancer.liveTables()).isEqualTo(1);
	}

	private Map<String, Double> shares(InstanceSnapshot snapshot, int picks) {
		Map<String, Integer> counts = new HashMap<>();
		for (int i = 0; i < picks; i++) {
			counts.merge(snapshot.get(this.balancer.chooseIndex(snapshot)).getInstanceId(), 1, Integer::sum);
		}
		Map<String, Double> shares = new HashMap<>();
		counts.forEach((id, count) -> shares.put(id, Math.round(count * 1e4 / picks) / 1e4));
		return shares;
	}

	/** Weights set by hand; {@link #updated()} plays a recomputation. */
	private static final class Weights implements ReportedWeights {

		private final Map<InstanceKey, Double> weights = new HashMap<>();

		private BooleanSupplier listener = () -> true;

		Weights set(ServiceInstance instance, double weight) {
			this.weights.put(InstanceKey.of(instance), weight);
			return this;
		}

		void updated() {
			this.listener.getAsBoolean();
		}

		@Override
		public double weight(InstanceKey instance) {
			return this.weights.getOrDefault(instance, 0.0);
		}

		@Override
		public void subscribe(BooleanSupplier listener) {
			this.listener = listener;
		}

	}

}
