package dev.atlas.loadbalancer.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.PickContext;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.count;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.pipeline.TestStages.request;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the strategy extension point gives a strategy: its own state per candidate set
 * (each gray lane is its own snapshot), the request, and live statistics by position. The
 * strategies here are test-only: adding one touches no Atlas class.
 */
class StrategyStateTest {

	private final List<ServiceInstance> fleet = List.of(instance("S1"), instance("S2"), instance("C1", "version", "v2"),
			instance("C2", "version", "v2"));

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private AtlasLoadBalancer loadBalancer(LoadBalancingStrategy strategy, LiveStats stats) {
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		GrayRules rules = new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true, Set.of(), Map.of(),
				null);
		ServiceInstanceListSupplier discovery = TestStages.discovery(this.fleet);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", TestStages.stage(discovery, new SnapshotCache(parser), null, null,
				new GrayRouter(SERVICE, rules, this.meters), null));
		return TestStages.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class), "test",
				strategy, new SnapshotCache(parser), stats);
	}

	private static ServiceInstance choose(AtlasLoadBalancer loadBalancer, Request<?> request) {
		return Mono.from(loadBalancer.choose(request)).block().getServer();
	}

	@Test
	void aStrategyKeepsItsStatePerCandidateSet() {
		// Round robin with one position per candidate set, memoized on the lane's
		// snapshot.
		LoadBalancingStrategy perLane = new LoadBalancingStrategy() {

			private final Function<InstanceSnapshot, AtomicInteger> position = (lane) -> new AtomicInteger();

			@Override
			public int choose(InstanceSnapshot candidates, PickContext context) {
				return candidates.isEmpty() ? -1
						: Math.floorMod(candidates.derive(this, this.position).getAndIncrement(), candidates.size());
			}

		};
		AtlasLoadBalancer loadBalancer = loadBalancer(perLane, LiveStats.NONE);
		List<ServiceInstance> picks = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			picks.add(choose(loadBalancer, request((i % 2 == 0) ? null : "v2")));
		}
		assertThat(count(picks)).containsEntry("S1", 250)
			.containsEntry("S2", 250)
			.containsEntry("C1", 250)
			.containsEntry("C2", 250);
	}

	@Test
	void aStrategyReadsTheRequestAndLiveStatisticsByPosition() {
		// In flight by instance id, as a stats implementation would hold them: S2 is
		// busy.
		LiveStats stats = new LiveStats() {

			@Override
			public int inFlight(InstanceSnapshot candidates, int position) {
				String id = candidates.get(position).getInstanceId();
				return ("S2".equals(id) || "C1".equals(id)) ? 5 : 1;
			}

			@Override
			public double latencyMillis(InstanceSnapshot candidates, int position) {
				return "S1".equals(candidates.get(position).getInstanceId()) ? 40.0 : 10.0;
			}

		};
		List<String> seen = new ArrayList<>();
		LoadBalancingStrategy leastLoaded = (candidates, context) -> {
			seen.add(context.header("x-service-version") + "/" + context.latencyMillis(0));
			int best = 0;
			for (int i = 1; i < candidates.size(); i++) {
				if (context.inFlight(i) < context.inFlight(best)) {
					best = i;
				}
			}
			return best;
		};
		AtlasLoadBalancer loadBalancer = loadBalancer(leastLoaded, stats);
		assertThat(choose(loadBalancer, request(null)).getInstanceId()).isEqualTo("S1");
		assertThat(choose(loadBalancer, request("v2")).getInstanceId()).isEqualTo("C2");
		assertThat(seen).containsExactly("null/40.0", "v2/10.0");
	}

}
