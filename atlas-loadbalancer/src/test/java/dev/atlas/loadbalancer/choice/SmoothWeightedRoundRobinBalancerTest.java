package dev.atlas.loadbalancer.choice;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.count;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

class SmoothWeightedRoundRobinBalancerTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private SmoothWeightedRoundRobinBalancer balancer(AllZeroWeightsPolicy policy) {
		return new SmoothWeightedRoundRobinBalancer(new StrategySettings(SERVICE,
				new InstanceAttributesParser(SERVICE, "version", this.meters), policy, this.meters), 0);
	}

	private static String sequence(Balancer balancer, List<ServiceInstance> candidates, int picks) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < picks; i++) {
			ids.add(balancer.choose(candidates).getInstanceId());
		}
		return String.join(" ", ids);
	}

	/** Reference: nginx's ngx_http_upstream_get_peer, run naively. */
	private static List<Integer> nginx(long[] weights, int picks) {
		long[] current = new long[weights.length];
		long total = Arrays.stream(weights).sum();
		List<Integer> out = new ArrayList<>();
		for (int p = 0; p < picks; p++) {
			int best = -1;
			for (int i = 0; i < weights.length; i++) {
				current[i] += weights[i];
				if (best == -1 || current[i] > current[best]) {
					best = i;
				}
			}
			current[best] -= total;
			out.add(best);
		}
		return out;
	}

	@Test
	void nginxSequenceForFiveOneOne() {
		List<ServiceInstance> candidates = List.of(weighted("a", "5"), weighted("b", "1"), weighted("c", "1"));
		assertThat(sequence(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 14))
			.isEqualTo("a a b a c a a a a b a c a a");
	}

	@Test
	void matchesNaiveNginxForAssortedWeights() {
		long[][] cases = { { 5, 1, 1 }, { 1, 2, 3 }, { 3, 3, 1, 7, 2 }, { 1, 1, 1, 1 }, { 10, 1 }, { 4, 6, 4, 6 },
				{ 2, 9, 2, 2, 9, 1, 5 } };
		for (long[] weights : cases) {
			double[] asDoubles = Arrays.stream(weights).asDoubleStream().toArray();
			SmoothWeightedRoundRobinSequence sequence = SmoothWeightedRoundRobinSequence.of(asDoubles);
			List<Integer> expected = nginx(weights, 3 * sequence.period());
			for (int i = 0; i < expected.size(); i++) {
				assertThat(sequence.at(i)).as("weights %s, pick %d", Arrays.toString(weights), i)
					.isEqualTo(expected.get(i));
			}
		}
	}

	@Test
	void everyWindowOfSumWeightsHasExactProportions() {
		List<ServiceInstance> candidates = List.of(weighted("a", "1"), weighted("b", "2"), weighted("c", "3"));
		SmoothWeightedRoundRobinBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		List<String> picks = List.of(sequence(balancer, candidates, 600).split(" "));
		for (int start = 0; start + 6 <= picks.size(); start++) {
			Map<String, Long> window = picks.subList(start, start + 6)
				.stream()
				.collect(Collectors.groupingBy((id) -> id, Collectors.counting()));
			assertThat(window).containsEntry("a", 1L).containsEntry("b", 2L).containsEntry("c", 3L);
		}
	}

	@Test
	void floatNacosWeights() {
		List<ServiceInstance> candidates = List.of(instance("A", "nacos.weight", "1.0"),
				instance("B", "nacos.weight", "6.0"));
		Map<String, Integer> counts = count(pickAll(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 7_000));
		assertThat(counts).containsEntry("A", 1_000).containsEntry("B", 6_000);
	}

	@Test
	void malformedAndFractionalWeights() {
		// A (abc -> 1), B (0.5), C (missing -> 1): exact 2:1:2 over every 5 picks.
		List<ServiceInstance> candidates = List.of(weighted("A", "abc"), weighted("B", "0.5"), instance("C"));
		Map<String, Integer> counts = count(pickAll(balancer(AllZeroWeightsPolicy.FAIL_OPEN), candidates, 5_000));
		assertThat(counts).containsEntry("A", 2_000).containsEntry("B", 1_000).containsEntry("C", 2_000);
	}

	@Test
	void zeroDrainedAndAllZeroPolicies() {
		assertThat(count(pickAll(balancer(AllZeroWeightsPolicy.FAIL_OPEN),
				List.of(weighted("A", "0"), weighted("B", "5")), 100)))
			.containsOnlyKeys("B");
		List<ServiceInstance> allZero = List.of(weighted("A", "0"), weighted("B", "0"));
		assertThat(count(pickAll(balancer(AllZeroWeightsPolicy.FAIL_OPEN), allZero, 100))).containsEntry("A", 50)
			.containsEntry("B", 50);
		assertThat(balancer(AllZeroWeightsPolicy.REJECT).choose(allZero)).isNull();
	}

	@Test
	void eightThreadsKeepExactTotals() throws Exception {
		List<ServiceInstance> candidates = List.of(weighted("a", "5"), weighted("b", "1"), weighted("c", "1"),
				weighted("d", "3"));
		SmoothWeightedRoundRobinBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		int threads = 8;
		int perThread = 100_000;
		Map<String, LongAdder> totals = new ConcurrentHashMap<>();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			futures.add(pool.submit(() -> {
				start.await();
				Map<String, Long> local = new HashMap<>();
				for (int i = 0; i < perThread; i++) {
					local.merge(balancer.choose(candidates).getInstanceId(), 1L, Long::sum);
				}
				local.forEach((id, n) -> totals.computeIfAbsent(id, (k) -> new LongAdder()).add(n));
				return null;
			}));
		}
		start.countDown();
		for (Future<?> future : futures) {
			future.get(60, TimeUnit.SECONDS);
		}
		pool.shutdown();
		// Positions 0..799,999 were each taken exactly once: the totals are those of the
		// single-threaded
		// sequence. 800,000 = 80,000 periods of 10, so exactly 5:1:1:3.
		assertThat(totals.get("a").sum()).isEqualTo(400_000);
		assertThat(totals.get("b").sum()).isEqualTo(80_000);
		assertThat(totals.get("c").sum()).isEqualTo(80_000);
		assertThat(totals.get("d").sum()).isEqualTo(240_000);
	}

	@Test
	void largePeriodsAreScaledDownKeepingShares() {
		// Weights 1..2,000 (sum 2,001,000) exceed the period cap; shares stay within 0.01
		// points.
		double[] weights = new double[2_000];
		for (int i = 0; i < weights.length; i++) {
			weights[i] = i + 1;
		}
		SmoothWeightedRoundRobinSequence sequence = SmoothWeightedRoundRobinSequence.of(weights);
		assertThat(sequence.period()).isLessThanOrEqualTo(SmoothWeightedRoundRobinSequence.MAX_PERIOD + 2_000);
		int[] counts = new int[weights.length];
		for (int p = 0; p < sequence.period(); p++) {
			counts[sequence.at(p)]++;
		}
		double total = 2_001_000;
		for (int i = 0; i < weights.length; i++) {
			assertThat(Math.abs(counts[i] / (double) sequence.period() - weights[i] / total)).isLessThan(0.0001);
		}
	}

	@Test
	void positionSurvivesARefresh() {
		SmoothWeightedRoundRobinBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		List<ServiceInstance> first = List.of(weighted("a", "1"), weighted("b", "1"));
		assertThat(sequence(balancer, first, 3)).isEqualTo("a b a");
		List<ServiceInstance> refreshed = List.of(weighted("a", "1"), weighted("b", "1"));
		assertThat(sequence(balancer, refreshed, 1)).isEqualTo("b");
	}

	@Test
	void eachCandidateSetKeepsItsOwnSequence() {
		SmoothWeightedRoundRobinBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		List<ServiceInstance> lane = List.of(weighted("a", "1"), weighted("b", "1"));
		List<ServiceInstance> other = List.of(weighted("c", "2"), weighted("d", "1"));
		List<String> picks = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			picks.add(balancer.choose(lane).getInstanceId());
			picks.add(balancer.choose(other).getInstanceId());
		}
		assertThat(String.join(" ", picks)).isEqualTo("a c b d a c b c a d b c");
		assertThat(balancer.choose(lane).getInstanceId()).isEqualTo("a");
		// The same instances in another order are the same set: the position goes on (7,
		// the second of [b, a]; a new set would start at 0).
		assertThat(balancer.choose(List.of(weighted("b", "1"), weighted("a", "1"))).getInstanceId()).isEqualTo("a");
	}

	@Test
	void rememberedSetsAreBounded() {
		// At most 10 instance entries: five sets of two. Sets that are gone are
		// forgotten, so churn of instances (every deployment brings new ids) cannot grow
		// the memory.
		SmoothWeightedRoundRobinBalancer balancer = new SmoothWeightedRoundRobinBalancer(
				new StrategySettings(SERVICE, new InstanceAttributesParser(SERVICE, "version", this.meters),
						AllZeroWeightsPolicy.FAIL_OPEN, this.meters),
				() -> 0, 10);
		for (int deployment = 0; deployment < 1_000; deployment++) {
			List<ServiceInstance> fleet = List.of(weighted("a" + deployment, "1"), weighted("b" + deployment, "1"));
			assertThat(sequence(balancer, fleet, 2)).isEqualTo("a" + deployment + " b" + deployment);
		}
		assertThat(balancer.rememberedSets()).isBetween(1L, 5L);
	}

	@Test
	void lanePositionsSurviveRefreshesOfALargeFleetWithRetriesOnEveryInstance() {
		// 400 instances: requests without a version header are served by all of them,
		// v2 requests by a lane of 100. Every instance fails once per refresh, so 400
		// retry sets of 399 instances are chosen from: 159,600 instance entries per
		// refresh, more than MAX_REMEMBERED_INSTANCES. Retry sets are short-lived: their
		// positions stay on their snapshots, both lanes' positions survive every refresh
		// (exact sequences) and only the two lanes are remembered.
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		SmoothWeightedRoundRobinBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		List<String> allPicks = new ArrayList<>();
		List<String> canaryPicks = new ArrayList<>();
		for (int refresh = 0; refresh < 3; refresh++) {
			List<ServiceInstance> fleet = new ArrayList<>();
			for (int i = 0; i < 400; i++) {
				fleet.add((i % 4 == 1) ? instance("i" + i, "version", "v2") : instance("i" + i));
			}
			InstanceSnapshot all = InstanceSnapshot.of(fleet, parser);
			InstanceSnapshot canary = all.filter((i) -> all.attributes(i).tag() != null);
			for (int pick = 0; pick < 3; pick++) {
				allPicks.add(balancer.choose(all).getInstanceId());
				canaryPicks.add(balancer.choose(canary).getInstanceId());
			}
			for (ServiceInstance failed : fleet) {
				InstanceSnapshot others = RetryAvoidance.avoid(all, failed);
				assertThat(others).hasSize(399);
				assertThat(balancer.choose(others)).isNotSameAs(failed);
			}
		}
		assertThat(allPicks).containsExactly("i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8");
		assertThat(canaryPicks).containsExactly("i1", "i5", "i9", "i13", "i17", "i21", "i25", "i29", "i33");
		assertThat(balancer.rememberedSets()).isEqualTo(2);
	}

	@Test
	void aRetrySetKeepsItsSequenceWhileItsSnapshotLasts() {
		// Within one snapshot a retry set walks its own exact sequence (memoized on the
		// reduced snapshot, which retry avoidance memoizes on its parent).
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		SmoothWeightedRoundRobinBalancer balancer = balancer(AllZeroWeightsPolicy.FAIL_OPEN);
		InstanceSnapshot snapshot = InstanceSnapshot
			.of(List.of(weighted("a", "1"), weighted("b", "2"), weighted("c", "1")), parser);
		List<String> retries = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			retries.add(balancer.choose(RetryAvoidance.avoid(snapshot, snapshot.get(0))).getInstanceId());
		}
		assertThat(retries).containsExactly("b", "c", "b", "b", "c", "b");
		assertThat(balancer.rememberedSets()).isZero();
	}

	private static List<ServiceInstance> pickAll(Balancer balancer, List<ServiceInstance> candidates, int n) {
		List<ServiceInstance> picks = new ArrayList<>(n);
		for (int i = 0; i < n; i++) {
			picks.add(balancer.choose(candidates));
		}
		return picks;
	}

}
