package dev.atlas.loadbalancer.pipeline;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.loadbalancer.TestInstances;
import dev.atlas.loadbalancer.choice.Balancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import dev.atlas.loadbalancer.weighting.SlowStart;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

/** Atlas's stage with the built-in concerns in the order the auto-configuration uses. */
final class TestStages {

	private TestStages() {
	}

	/**
	 * A discovery stand-in that always emits the same list object, as Spring's cache does
	 * between refreshes.
	 */
	static ServiceInstanceListSupplier discovery(List<ServiceInstance> fleet) {
		return new ServiceInstanceListSupplier() {

			@Override
			public String getServiceId() {
				return TestInstances.SERVICE;
			}

			@Override
			public Flux<List<ServiceInstance>> get() {
				return Flux.just(fleet);
			}

		};
	}

	/**
	 * A GET to user-service, as Spring Cloud describes it to the load balancer.
	 * @param version the {@code X-Service-Version} header, or {@code null} for none
	 */
	static Request<RequestDataContext> request(@Nullable String version) {
		HttpHeaders headers = new HttpHeaders();
		if (version != null) {
			headers.add("X-Service-Version", version);
		}
		return new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/users/1"), headers, new LinkedMultiValueMap<>(), Map.of())));
	}

	/**
	 * A retry of a GET to user-service after a failure of {@code previous}, as Spring
	 * Cloud's retrying interceptors describe it.
	 */
	static Request<RetryableRequestContext> retry(ServiceInstance previous) {
		return new DefaultRequest<>(
				new RetryableRequestContext(previous, request(null).getContext().getClientRequest(), "default"));
	}

	/**
	 * The stage with warmup, gray lanes, affinity (each {@code null} for off) and retry
	 * avoidance, in their built-in order.
	 */
	static AtlasServiceInstanceListSupplier stage(ServiceInstanceListSupplier delegate, SnapshotCache snapshots,
			@Nullable LastKnownGood lastKnownGood, @Nullable SlowStart slowStart, @Nullable GrayRouter gray,
			@Nullable ClusterAffinity affinity) {
		List<WeightAdjuster> adjusters = new ArrayList<>();
		if (slowStart != null) {
			adjusters.add(slowStart);
		}
		List<CandidateFilter> filters = new ArrayList<>();
		if (gray != null) {
			filters.add(gray);
		}
		if (affinity != null) {
			filters.add(affinity);
		}
		filters.add(new RetryAvoidance());
		return stage(delegate, snapshots, lastKnownGood, adjusters, filters);
	}

	/**
	 * A stage with fixed adjusters and filters: its rules never change, and the load
	 * balancer above it chooses with its own pipeline's strategy.
	 */
	static AtlasServiceInstanceListSupplier stage(ServiceInstanceListSupplier delegate, SnapshotCache snapshots,
			@Nullable LastKnownGood lastKnownGood, List<? extends WeightAdjuster> adjusters,
			List<? extends CandidateFilter> filters) {
		return new AtlasServiceInstanceListSupplier(delegate, lastKnownGood,
				new ServicePipeline(new Pipeline(snapshots, adjusters, filters, "none", (candidates, context) -> {
					throw new IllegalStateException(
							"this stage's pipeline has no strategy: its load balancer has its own");
				})));
	}

	/**
	 * The load balancer of a service with a fixed strategy and no stage of its own (a
	 * stage in the chain applies its own pipeline).
	 */
	static AtlasLoadBalancer loadBalancer(String service, ObjectProvider<ServiceInstanceListSupplier> suppliers,
			String strategyName, LoadBalancingStrategy strategy, SnapshotCache snapshots, LiveStats stats) {
		return new AtlasLoadBalancer(service, suppliers,
				new ServicePipeline(new Pipeline(snapshots, List.of(), List.of(), strategyName, strategy)), stats);
	}

	/**
	 * The load balancer of a service with a weighted balancer and no live statistics.
	 */
	static AtlasLoadBalancer loadBalancer(String service, ObjectProvider<ServiceInstanceListSupplier> suppliers,
			Balancer balancer, InstanceAttributesParser parser) {
		return loadBalancer(service, suppliers, balancer.name(), balancer, new SnapshotCache(parser), LiveStats.NONE);
	}

	/**
	 * A smooth-round-robin load balancer over a fixed fleet, behind the stage with gray
	 * lanes ({@code X-Service-Version}, fallback baseline, baseline isolated) and retry
	 * avoidance; each candidate set starts at a random position.
	 */
	static AtlasLoadBalancer graySmoothRoundRobin(String service, List<ServiceInstance> fleet, MeterRegistry meters) {
		InstanceAttributesParser parser = new InstanceAttributesParser(service, "version", meters);
		GrayRules rules = new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true, Set.of(), Map.of(),
				null);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", stage(discovery(fleet), new SnapshotCache(parser), null, null,
				new GrayRouter(service, rules, meters), null));
		return loadBalancer(service, beans.getBeanProvider(ServiceInstanceListSupplier.class),
				SmoothWeightedRoundRobinBalancer.NAME,
				new SmoothWeightedRoundRobinBalancer(
						new StrategySettings(service, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters)),
				new SnapshotCache(parser), LiveStats.NONE);
	}

}
