package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * When Atlas chooses nothing, its empty response names the service and why, and the
 * exception made of it says so.
 */
class NoInstanceReasonTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);

	private AtlasLoadBalancer loadBalancer(List<ServiceInstance> fleet, AllZeroWeightsPolicy policy,
			List<CandidateFilter> filters) {
		ServiceInstanceListSupplier stage = TestStages.stage(TestStages.discovery(fleet),
				new SnapshotCache(this.parser), null, List.of(), filters);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", stage);
		WeightedRandomBalancer strategy = new WeightedRandomBalancer(
				new StrategySettings(SERVICE, this.parser, policy, this.meters));
		return TestStages.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
				"weighted-random", strategy, new SnapshotCache(this.parser), LiveStats.NONE);
	}

	private List<CandidateFilter> grayNoneAndRetryAvoidance() {
		return List.of(new GrayRouter(SERVICE,
				new GrayRules("X-Service-Version", null, GrayFallback.NONE, true, Set.of(), Map.of(), null),
				this.meters), new RetryAvoidance());
	}

	private static NoInstanceResponse none(AtlasLoadBalancer loadBalancer, String version) {
		Response<ServiceInstance> response = loadBalancer.choose(TestStages.request(version)).block();
		assertThat(response).isInstanceOf(EmptyResponse.class).isInstanceOf(NoInstanceResponse.class);
		assertThat(response.hasServer()).isFalse();
		return (NoInstanceResponse) response;
	}

	@Test
	void anEmptyRegistryListIsNoInstances() {
		NoInstanceResponse response = none(
				loadBalancer(List.of(), AllZeroWeightsPolicy.FAIL_OPEN, grayNoneAndRetryAvoidance()), null);
		assertThat(response.serviceId()).isEqualTo(SERVICE);
		assertThat(response.reason()).isEqualTo(NoInstanceReason.NO_INSTANCES);
		assertThat(response.toException()).isInstanceOf(IllegalStateException.class)
			.hasMessage("No instances available for " + SERVICE + ": the registry lists no instance of it");
	}

	@Test
	void aTagNobodyRunsWithFallbackNoneIsGrayFallbackNone() {
		AtlasLoadBalancer loadBalancer = loadBalancer(List.of(instance("A"), instance("B")),
				AllZeroWeightsPolicy.FAIL_OPEN, grayNoneAndRetryAvoidance());
		NoInstanceResponse response = none(loadBalancer, "v9");
		assertThat(response.reason()).isEqualTo(NoInstanceReason.GRAY_FALLBACK_NONE);
		assertThat(response.toException().getMessage()).isEqualTo("No instances available for " + SERVICE
				+ ": no instance has the requested gray tag and atlas.gray.fallback is none");
		// The same load balancer still serves untagged requests.
		assertThat(loadBalancer.choose(TestStages.request(null)).block().hasServer()).isTrue();
	}

	@Test
	void allWeightsZeroWithRejectIsAllWeightsZero() {
		NoInstanceResponse response = none(loadBalancer(List.of(weighted("A", "0"), weighted("B", "0")),
				AllZeroWeightsPolicy.REJECT, grayNoneAndRetryAvoidance()), null);
		assertThat(response.reason()).isEqualTo(NoInstanceReason.ALL_WEIGHTS_ZERO);
	}

	@Test
	void aFilterThatLeavesNothingGivesItsOwnReason() {
		CandidateFilter everythingOut = CandidateFilter.excluding((i) -> true);
		assertThat(
				none(loadBalancer(List.of(instance("A")), AllZeroWeightsPolicy.FAIL_OPEN, List.of(everythingOut)), null)
					.reason())
			.isEqualTo(NoInstanceReason.FILTERED_OUT);
		CandidateFilter ejecting = new CandidateFilter() {
			@Override
			public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
				return candidates.filter((i) -> false);
			}

			@Override
			public NoInstanceReason emptyReason() {
				return NoInstanceReason.NONE_CHOSEN;
			}
		};
		assertThat(none(loadBalancer(List.of(instance("A")), AllZeroWeightsPolicy.FAIL_OPEN, List.of(ejecting)), null)
			.reason()).isEqualTo(NoInstanceReason.NONE_CHOSEN);
	}

	@Test
	void noFilterRunsAfterTheStepThatLeftNothing() {
		// Documented in CandidateFilter: filters only narrow and never see an empty list,
		// so a filter after the one that left nothing (or after an empty registry list)
		// is not called, and cannot add fallback instances.
		AtomicInteger calls = new AtomicInteger();
		CandidateFilter counting = (candidates, request) -> {
			calls.incrementAndGet();
			return candidates;
		};
		assertThat(none(loadBalancer(List.of(instance("A")), AllZeroWeightsPolicy.FAIL_OPEN,
				List.of(CandidateFilter.excluding((i) -> true), counting)), null)
			.reason()).isEqualTo(NoInstanceReason.FILTERED_OUT);
		assertThat(none(loadBalancer(List.of(), AllZeroWeightsPolicy.FAIL_OPEN, List.of(counting)), null).reason())
			.isEqualTo(NoInstanceReason.NO_INSTANCES);
		assertThat(calls).hasValue(0);
		assertThat(loadBalancer(List.of(instance("A")), AllZeroWeightsPolicy.FAIL_OPEN, List.of(counting))
			.choose(TestStages.request(null))
			.block()
			.hasServer()).isTrue();
		assertThat(calls).hasValue(1);
	}

	@Test
	void theResponseOfAServiceAndReasonIsShared() {
		AtlasLoadBalancer loadBalancer = loadBalancer(List.of(), AllZeroWeightsPolicy.FAIL_OPEN, List.of());
		assertThat(none(loadBalancer, null)).isSameAs(none(loadBalancer, null));
	}

}
