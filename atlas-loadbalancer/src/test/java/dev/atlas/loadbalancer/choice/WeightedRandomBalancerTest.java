package dev.atlas.loadbalancer.choice;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.count;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Weighted random with a fixed seed. Tolerances are stated per test in percentage points
 * of the share; with N picks the standard deviation of a share p is sqrt(p(1-p)/N).
 */
class WeightedRandomBalancerTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private WeightedRandomBalancer balancer(AllZeroWeightsPolicy policy) {
		SplittableRandom seeded = new SplittableRandom(42);
		return new WeightedRandomBalancer(new StrategySettings(SERVICE,
				new InstanceAttributesParser(SERVICE, "version", this.meters), policy, this.meters), () -> seeded);
	}

	private static List<ServiceInstance> pick(Balancer balancer, List<ServiceInstance> candidates, int times) {
		List<ServiceInstance> picks = new ArrayList<>(times);
		for (int i = 0; i < times; i++) {
			picks.add(balancer.choose(candidates));
		}
		return picks;
	}

	private static double share(Map<String, Integer> counts, String id, int total) {
		return counts.getOrDefault(id, 0) / (double) total;
	}

	@Test
	void nacosWeightsAreHonoured() {
		// 7,000 picks, share of B = 6/7; sigma = 0.42 points, tolerance 3 points (> 7
		// sigma).
		List<ServiceInstance> candidates = List.of(instance("A", "nacos.weight", "1.0"),
				instance("B", "nacos.weight", "6.0"));
		Map<String, Integer> counts = count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 7_000));
		assertThat(share(counts, "A", 7_000)).isCloseTo(1 / 7.0, within(0.03));
		assertThat(share(counts, "B", 7_000)).isCloseTo(6 / 7.0, within(0.03));
		assertThat(counts.get("A")).isBetween(790, 1_210);
	}

	@Test
	void plainIntegerWeightsAreHonoured() {
		List<ServiceInstance> candidates = List.of(weighted("A", "1"), weighted("B", "6"));
		Map<String, Integer> counts = count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 7_000));
		assertThat(share(counts, "B", 7_000)).isCloseTo(6 / 7.0, within(0.03));
	}

	@Test
	void weightChangeTakesEffectOnTheNextRefresh() {
		WeightedRandomBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		List<ServiceInstance> before = List.of(weighted("A", "1"), weighted("B", "1"));
		pick(balancer, before, 100);
		// The registry pushes B's new weight: the cache emits a new list, the very next
		// picks use it.
		List<ServiceInstance> after = List.of(weighted("A", "1"), weighted("B", "9"));
		Map<String, Integer> counts = count(pick(balancer, after, 10_000));
		// sigma 0.3 points, tolerance 2 points.
		assertThat(share(counts, "B", 10_000)).isCloseTo(0.9, within(0.02));
	}

	@Test
	void distributionFollowsManyWeights() {
		// 100,000 picks over weights 1..5 (sum 15); largest sigma 0.15 points, tolerance
		// 1 point.
		List<ServiceInstance> candidates = List.of(weighted("w1", "1"), weighted("w2", "2"), weighted("w3", "3"),
				weighted("w4", "4"), weighted("w5", "5"));
		Map<String, Integer> counts = count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 100_000));
		for (int w = 1; w <= 5; w++) {
			assertThat(share(counts, "w" + w, 100_000)).as("share of w%d", w).isCloseTo(w / 15.0, within(0.01));
		}
	}

	@Test
	void zeroWeightIsDrained() {
		List<ServiceInstance> candidates = List.of(weighted("A", "0"), weighted("B", "5"));
		assertThat(count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 1_000))).containsOnlyKeys("B");
	}

	@Test
	void negativeWeightIsDrainedLikeZero() {
		List<ServiceInstance> candidates = List.of(weighted("A", "-3"), weighted("B", "1"), weighted("C", "1"));
		assertThat(count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 1_000))).doesNotContainKey("A");
	}

	@Test
	void malformedWeightsUseTheDefault() {
		// A and C count as 1, B as 0.5: shares 0.4 / 0.2 / 0.4. 10,000 picks, sigma 0.5
		// points, tolerance 2.
		List<ServiceInstance> candidates = List.of(weighted("A", "abc"), weighted("B", "0.5"), instance("C"));
		Map<String, Integer> counts = count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 10_000));
		assertThat(share(counts, "A", 10_000)).isCloseTo(0.4, within(0.02));
		assertThat(share(counts, "B", 10_000)).isCloseTo(0.2, within(0.02));
		assertThat(share(counts, "C", 10_000)).isCloseTo(0.4, within(0.02));
	}

	@Test
	void allZeroFailOpenSpreadsEvenlyAndCountsEachRequest() {
		List<ServiceInstance> candidates = List.of(weighted("A", "0"), weighted("B", "0"));
		Map<String, Integer> counts = count(pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 10_000));
		assertThat(share(counts, "A", 10_000)).isCloseTo(0.5, within(0.02));
		assertThat(this.meters.counter("atlas.weights.all.zero", "service", SERVICE, "policy", "fail-open").count())
			.isEqualTo(10_000);
	}

	@Test
	void allZeroRejectChoosesNothingAndCounts() {
		List<ServiceInstance> candidates = List.of(weighted("A", "0"), weighted("B", "0"));
		WeightedRandomBalancer balancer = balancer(AllZeroWeightsPolicy.REJECT);
		assertThat(balancer.choose(candidates)).isNull();
		assertThat(balancer.choose(candidates)).isNull();
		assertThat(this.meters.counter("atlas.weights.all.zero", "service", SERVICE, "policy", "reject").count())
			.isEqualTo(2);
	}

	@Test
	void emptyAndNullOnlyListsChooseNothing() {
		WeightedRandomBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		assertThat(balancer.choose(List.of())).isNull();
		List<ServiceInstance> nulls = new ArrayList<>();
		nulls.add(null);
		assertThat(balancer.choose(nulls)).isNull();
	}

	@Test
	void returnsTheVeryObjectTheSupplierProduced() {
		ServiceInstance a = weighted("A", "1");
		ServiceInstance b = weighted("B", "1");
		List<ServiceInstance> candidates = List.of(a, b);
		for (ServiceInstance picked : pick(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 100)) {
			assertThat(picked).matches((p) -> p == a || p == b);
		}
		ServiceInstance single = weighted("S", "2");
		assertThat(balancer(AllZeroWeightsPolicy.FAIL_OPEN).choose(List.of(single))).isSameAs(single);
	}

	@Test
	void metadataIsParsedOncePerSnapshotNotPerPick() {
		AtomicInteger reads = new AtomicInteger();
		List<ServiceInstance> candidates = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			candidates.add(new CountingInstance("i" + i, String.valueOf(1 + i % 7), reads));
		}
		WeightedRandomBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		pick(balancer, candidates, 10_000);
		assertThat(reads).hasValue(1_000);
		// A refresh (a new list object) parses again, once.
		pick(balancer, new ArrayList<>(candidates), 10_000);
		assertThat(reads).hasValue(2_000);
	}

	/** Counts every read of its metadata. */
	static final class CountingInstance extends DefaultServiceInstance {

		private final AtomicInteger reads;

		CountingInstance(String id, String weight, AtomicInteger reads) {
			super(id, SERVICE, id + ".local", 8080, false, Map.of("weight", weight));
			this.reads = reads;
		}

		@Override
		public Map<String, String> getMetadata() {
			this.reads.incrementAndGet();
			return super.getMetadata();
		}

	}

}
