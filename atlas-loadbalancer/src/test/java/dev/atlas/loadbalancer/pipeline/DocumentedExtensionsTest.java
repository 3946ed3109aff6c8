package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The three extensions of {@code docs/extending.md}, as written there, through Atlas's
 * stage and load balancer: a filter (instances in maintenance left out), a weight
 * adjuster (zone {@code b} at half weight) and a strategy ({@code least-in-flight}).
 * Test-only code: adding them changes no Atlas class.
 */
class DocumentedExtensionsTest {

	private final List<ServiceInstance> fleet = List.of(instance("A", "zone", "a"),
			instance("B", "zone", "b", "maintenance", "true"), instance("C", "zone", "b"));

	// docs/extending.md, "Your own filter"
	CandidateFilter skipInstancesInMaintenance() {
		return CandidateFilter.excluding((instance) -> "true".equals(instance.getMetadata().get("maintenance")));
	}

	// docs/extending.md, "Your own weight adjuster"
	WeightAdjuster halveInstancesInZoneB() {
		return new WeightAdjuster() {
			@Override
			public InstanceSnapshot adjust(InstanceSnapshot candidates) {
				return candidates.derive(this, (snapshot) -> {
					double[] weights = snapshot.effectiveWeights();
					for (int i = 0; i < weights.length; i++) {
						if ("b".equals(snapshot.attributes(i).cluster())) {
							weights[i] /= 2;
						}
					}
					return snapshot.withEffectiveWeights(weights);
				});
			}
		};
	}

	// docs/extending.md, "Your own strategy"
	StrategyFactory leastInFlight() {
		return StrategyFactory.of("least-in-flight", (settings) -> (candidates, context) -> {
			int best = -1;
			for (int i = 0; i < candidates.size(); i++) {
				if (candidates.effectiveWeight(i) > 0 && (best < 0 || context.inFlight(i) < context.inFlight(best))) {
					best = i;
				}
			}
			return best;
		});
	}

	@Test
	void theDocumentedExtensionsWorkThroughThePipeline() {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", meters);
		ServiceInstanceListSupplier discovery = TestStages.discovery(this.fleet);
		AtlasServiceInstanceListSupplier stage = TestStages.stage(discovery, new SnapshotCache(parser), null,
				List.of(halveInstancesInZoneB()), List.of(skipInstancesInMaintenance()));
		InstanceSnapshot candidates = (InstanceSnapshot) stage.get().blockFirst();
		assertThat(candidates).extracting(ServiceInstance::getInstanceId).containsExactly("A", "C");
		assertThat(candidates.effectiveWeight(0)).isEqualTo(1.0);
		assertThat(candidates.effectiveWeight(1)).isEqualTo(0.5);

		// A is busy: least-in-flight takes C.
		Map<String, Integer> inFlight = Map.of("A", 3, "C", 1);
		LiveStats stats = new LiveStats() {

			@Override
			public int inFlight(InstanceSnapshot snapshot, int position) {
				return inFlight.get(snapshot.get(position).getInstanceId());
			}

			@Override
			public double latencyMillis(InstanceSnapshot snapshot, int position) {
				return Double.NaN;
			}

		};
		StrategyFactory factory = leastInFlight();
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", stage);
		AtlasLoadBalancer loadBalancer = TestStages.loadBalancer(SERVICE,
				beans.getBeanProvider(ServiceInstanceListSupplier.class), factory.name(),
				factory.create(new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters)),
				new SnapshotCache(parser), stats);
		assertThat(Mono.from(loadBalancer.choose(new DefaultRequest<>())).block().getServer().getInstanceId())
			.isEqualTo("C");
	}

}
