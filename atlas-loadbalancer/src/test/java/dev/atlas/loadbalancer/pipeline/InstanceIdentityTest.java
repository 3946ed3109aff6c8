package dev.atlas.loadbalancer.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.MutableClock;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.weighting.SlowStart;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.pipeline.TestStages.request;
import static dev.atlas.loadbalancer.pipeline.TestStages.retry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances that report one instance id (registries that key ids per node, hand-typed
 * ids) are two instances: Atlas tells instances apart by id, host and port, in every
 * state that outlives a list (retry avoidance, warmup age, request statistics), and says
 * once that the ids collide.
 */
@ExtendWith(OutputCaptureExtension.class)
class InstanceIdentityTest {

	private static final String ID = "user-service-8080";

	private static final long T0 = 1_700_000_000_000L;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);

	private static ServiceInstance at(String host) {
		return new DefaultServiceInstance(ID, SERVICE, host, 8080, false, Map.of());
	}

	@Test
	void aRetryAfterAFailureOfOneGoesToTheOtherWithTheSameId() {
		ServiceInstance a = at("10.0.0.1");
		ServiceInstance b = at("10.0.0.2");
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", TestStages.stage(TestStages.discovery(List.of(a, b)), new SnapshotCache(this.parser),
				null, null, null, null));
		SplittableRandom random = new SplittableRandom(42);
		AtlasLoadBalancer loadBalancer = TestStages.loadBalancer(SERVICE,
				beans.getBeanProvider(ServiceInstanceListSupplier.class),
				new WeightedRandomBalancer(
						new StrategySettings(SERVICE, this.parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters),
						() -> random),
				this.parser);
		int failures = 0;
		int retries = 0;
		for (int i = 0; i < 1_000; i++) {
			ServiceInstance chosen = choose(loadBalancer, request(null));
			if (chosen == a) {
				// A always answers 503; one retry on another instance is allowed.
				retries++;
				// The registry client may have produced a new object for A since.
				chosen = choose(loadBalancer, retry(at("10.0.0.1")));
				if (chosen.getHost().equals("10.0.0.1")) {
					failures++;
				}
			}
		}
		// Seed 42: A is chosen first 525 times of 1,000 (weights 1:1, about half); each
		// of
		// those retries went to B.
		assertThat(retries).isEqualTo(525);
		assertThat(failures).isZero();
	}

	@Test
	void anInstanceThatAppearsLaterWithTheSameIdWarmsUpOnItsOwn() {
		MutableClock clock = new MutableClock(T0);
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, clock);
		// A is in the first list this caller sees: warm.
		assertThat(slowStart.apply(snapshot(at("10.0.0.1"))).effectiveWeights()).containsExactly(1.0);
		clock.advance(Duration.ofMinutes(5));
		// B shows up five minutes later with A's id: new, 10 % of its weight.
		ServiceInstance b = at("10.0.0.2");
		InstanceSnapshot both = slowStart.apply(snapshot(at("10.0.0.1"), b));
		assertThat(both.effectiveWeights()).containsExactly(1.0, 0.10);
		assertThat(slowStart.factor(b)).isEqualTo(0.10);
		assertThat(slowStart.factor(at("10.0.0.1"))).isEqualTo(1.0);
		clock.advance(Duration.ofSeconds(30));
		assertThat(slowStart.apply(snapshot(at("10.0.0.1"), b)).effectiveWeights()).containsExactly(1.0, 0.5);
	}

	@Test
	void requestCountsAreKeptPerInstance() {
		InstanceStats stats = new InstanceStats();
		ServiceInstance a = at("10.0.0.1");
		ServiceInstance b = at("10.0.0.2");
		for (int i = 0; i < 3; i++) {
			stats.started(a);
		}
		stats.started(b);
		stats.completed(a, 5_000_000);
		assertThat(stats.requests(at("10.0.0.1"))).isEqualTo(3);
		assertThat(stats.requests(at("10.0.0.2"))).isEqualTo(1);
		assertThat(stats.inFlight(a)).isEqualTo(2);
		assertThat(stats.inFlight(b)).isEqualTo(1);
		assertThat(stats.latencyMillis(a)).isEqualTo(5.0);
		assertThat(stats.latencyMillis(b)).isNaN();
		assertThat(stats.size()).isEqualTo(2);
		// The same, by position in a snapshot, as strategies read them.
		InstanceSnapshot snapshot = snapshot(a, b);
		assertThat(stats.inFlight(snapshot, 0)).isEqualTo(2);
		assertThat(stats.inFlight(snapshot, 1)).isEqualTo(1);
		// An instance without an id is its host and port, as before.
		ServiceInstance noId = new DefaultServiceInstance(null, SERVICE, "10.0.0.1", 8080, false, Map.of());
		stats.started(noId);
		assertThat(stats.requests(noId)).isEqualTo(1);
		assertThat(stats.requests(a)).isEqualTo(3);
	}

	@Test
	void aListWithDuplicateIdsIsReportedOncePerId(CapturedOutput output) {
		for (int refresh = 0; refresh < 3; refresh++) {
			snapshot(at("10.0.0.1"), at("10.0.0.2"),
					new DefaultServiceInstance("other", SERVICE, "10.0.0.3", 8080, false, Map.of()));
		}
		List<String> warnings = new ArrayList<>(output.getOut().lines().filter((line) -> line.contains(ID)).toList());
		assertThat(warnings).hasSize(1);
		assertThat(warnings.get(0)).contains("WARN")
			.contains("Service 'user-service'")
			.contains("instance id '" + ID + "'")
			.contains("10.0.0.1:8080")
			.contains("10.0.0.2:8080")
			.doesNotContain("10.0.0.3");
	}

	private InstanceSnapshot snapshot(ServiceInstance... instances) {
		return InstanceSnapshot.of(List.of(instances), this.parser);
	}

	private static ServiceInstance choose(AtlasLoadBalancer loadBalancer, Request<?> request) {
		return Mono.from(loadBalancer.choose(request)).block().getServer();
	}

}
