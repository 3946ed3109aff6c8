package dev.atlas.loadbalancer.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-instance in-flight limit under every built-in strategy: an instance at its
 * limit is skipped, and a request finds every candidate at its limit gets no instance at
 * once, with the reason {@code SATURATED}.
 */
class InFlightLimitPipelineTest {

	private final List<ServiceInstance> fleet = fleet(3);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceStats stats = new InstanceStats();

	private final InFlightLimit limit = new InFlightLimit(1);

	enum Strategy {

		WEIGHTED_RANDOM(WeightedRandomBalancer::new),

		SMOOTH_ROUND_ROBIN(SmoothWeightedRoundRobinBalancer::new),

		LEAST_REQUEST((settings) -> new LeastRequestBalancer(settings, LeastRequestRules.DEFAULTS)),

		PEAK_EWMA((settings) -> new PeakEwmaBalancer(settings, 2)),

		// every request has the same key: the ring sends them all to one instance
		RING_HASH((settings) -> new RingHashBalancer(settings,
				new HashRules("X-User-Id", null, HashRules.DEFAULT_VIRTUAL_NODES, false, 1.25)));

		final Function<StrategySettings, LoadBalancingStrategy> create;

		Strategy(Function<StrategySettings, LoadBalancingStrategy> create) {
			this.create = create;
		}

	}

	private AtlasLoadBalancer loadBalancer(Strategy strategy) {
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", TestStages.stage(TestStages.discovery(this.fleet), new SnapshotCache(parser), null,
				List.of(), List.of()));
		LoadBalancingStrategy chosen = strategy.create
			.apply(new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters));
		return new AtlasLoadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
				new ServicePipeline(
						new Pipeline(new SnapshotCache(parser), List.of(), List.of(), strategy.name(), chosen)),
				this.stats, this.limit);
	}

	/** A request of an HTTP client that starts (and stays in flight) once chosen. */
	private ServiceInstance sent(AtlasLoadBalancer loadBalancer, boolean blocking) {
		Response<ServiceInstance> response = blocking ? loadBalancer.chooseAndWait(TestStages.request(null))
				: loadBalancer.choose(TestStages.request(null)).block();
		assertThat(response.hasServer()).isTrue();
		this.stats.started(response.getServer());
		return response.getServer();
	}

	@ParameterizedTest
	@EnumSource(Strategy.class)
	void anInstanceAtItsLimitIsSkippedAndAFullFleetFailsAtOnce(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		List<ServiceInstance> busy = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			busy.add(sent(loadBalancer, (i % 2) == 0));
		}
		assertThat(busy).as("one request in flight on each").containsExactlyInAnyOrderElementsOf(this.fleet);
		Response<ServiceInstance> none = loadBalancer.choose(TestStages.request(null)).block();
		assertThat(none).isInstanceOfSatisfying(NoInstanceResponse.class,
				(response) -> assertThat(response.reason()).isEqualTo(NoInstanceReason.SATURATED));
		assertThat(this.limit.saturatedCount()).isEqualTo(1);
		this.stats.completed(busy.get(1), 1_000_000);
		assertThat(sent(loadBalancer, true)).as("the one freed").isEqualTo(busy.get(1));
		for (ServiceInstance instance : this.fleet) {
			assertThat(this.stats.inFlight(instance)).isEqualTo(1);
		}
	}

	@ParameterizedTest
	@EnumSource(value = Strategy.class, names = { "WEIGHTED_RANDOM", "RING_HASH" })
	void aChoiceByHandSkipsFullInstancesButHoldsNoSlot(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		ServiceInstance busy = sent(loadBalancer, true);
		for (int i = 0; i < 20; i++) {
			// LoadBalancerClient.choose(serviceId): Atlas never sees this request start
			Response<ServiceInstance> byHand = loadBalancer.choose(new DefaultRequest<>()).block();
			assertThat(byHand.getServer()).isNotEqualTo(busy);
		}
		assertThat(this.stats.inFlightTotal()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(value = Strategy.class, names = "SMOOTH_ROUND_ROBIN")
	void aLimitOffOrRaisedAtRuntimeAppliesToTheNextPick(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		for (int i = 0; i < 3; i++) {
			sent(loadBalancer, false);
		}
		this.limit.update(2);
		for (int i = 0; i < 3; i++) {
			sent(loadBalancer, false);
		}
		this.limit.update(InFlightLimit.OFF);
		for (int i = 0; i < 3; i++) {
			sent(loadBalancer, false);
		}
		assertThat(this.stats.inFlightTotal()).isEqualTo(9);
		assertThat(this.limit.saturatedCount()).isZero();
	}

}
