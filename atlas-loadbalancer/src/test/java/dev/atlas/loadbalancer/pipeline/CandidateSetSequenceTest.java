package dev.atlas.loadbalancer.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.count;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.pipeline.TestStages.request;
import static dev.atlas.loadbalancer.pipeline.TestStages.retry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Smooth weighted round robin keeps its sequence per candidate set: each gray lane and
 * each retry's reduced set walks its own positions, so every set gives each of its
 * instances exactly its share, however requests of different sets interleave. Through the
 * real pipeline: Atlas's stage with the gray lane and retry avoidance, and the load
 * balancer with the strategy as registered (random start per set).
 */
class CandidateSetSequenceTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private AtlasLoadBalancer loadBalancer(List<ServiceInstance> fleet) {
		return TestStages.graySmoothRoundRobin(SERVICE, fleet, this.meters);
	}

	private static ServiceInstance choose(AtlasLoadBalancer loadBalancer, Request<?> request) {
		return Mono.from(loadBalancer.choose(request)).block().getServer();
	}

	@Test
	void alternatingLanesEachGetExactlyTheirShare() {
		AtlasLoadBalancer loadBalancer = loadBalancer(List.of(instance("S1"), instance("S2"),
				instance("C1", "version", "v2"), instance("C2", "version", "v2")));
		List<ServiceInstance> picks = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			picks.add(choose(loadBalancer, request((i % 2 == 0) ? null : "v2")));
		}
		assertThat(count(picks)).containsOnly(Map.entry("S1", 250), Map.entry("S2", 250), Map.entry("C1", 250),
				Map.entry("C2", 250));
	}

	@Test
	void retriesDoNotSpendTheFirstAttemptsPositions() {
		ServiceInstance a = instance("A");
		AtlasLoadBalancer loadBalancer = loadBalancer(List.of(a, instance("B"), instance("C")));
		List<ServiceInstance> firstAttempts = new ArrayList<>();
		List<ServiceInstance> retries = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			ServiceInstance first = choose(loadBalancer, request(null));
			firstAttempts.add(first);
			if (first == a) {
				// A always answers 503: one retry on another instance.
				retries.add(choose(loadBalancer, retry(first)));
			}
		}
		assertThat(count(firstAttempts)).containsOnly(Map.entry("A", 100), Map.entry("B", 100), Map.entry("C", 100));
		assertThat(count(retries)).containsOnly(Map.entry("B", 50), Map.entry("C", 50));
	}

	@Test
	void aRefreshWithTheSameInstancesContinuesTheSequence() {
		// Each refresh of the registry gives new list objects (and new instance
		// objects) for the same two instances: the sequence goes on, it does not start
		// anew (which would favour one instance whenever refreshes come often).
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		SmoothWeightedRoundRobinBalancer balancer = new SmoothWeightedRoundRobinBalancer(
				new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters), 0);
		List<String> picks = new ArrayList<>();
		for (int refresh = 0; refresh < 6; refresh++) {
			List<ServiceInstance> list = List.of(instance("a"), instance("b"));
			picks.add(balancer.choose(list).getInstanceId());
		}
		assertThat(picks).containsExactly("a", "b", "a", "b", "a", "b");
	}

}
