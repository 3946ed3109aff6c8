package dev.atlas.loadbalancer.pipeline;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The load-aware strategies behind Atlas's stage: they choose among what the gray lane
 * and retry avoidance left, and read the live statistics the request lifecycle keeps.
 */
class LoadAwareStrategiesPipelineTest {

	private final ServiceInstance s1 = instance("S1");

	private final ServiceInstance s2 = instance("S2");

	private final List<ServiceInstance> fleet = List.of(this.s1, this.s2, instance("C1", "version", "v2"),
			instance("C2", "version", "v2"));

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceStats stats = new InstanceStats();

	enum Strategy {

		LEAST_REQUEST((settings) -> new LeastRequestBalancer(settings, LeastRequestRules.DEFAULTS)),

		PEAK_EWMA((settings) -> new PeakEwmaBalancer(settings, 2)),

		RING_HASH((settings) -> new RingHashBalancer(settings,
				new HashRules("X-User-Id", null, HashRules.DEFAULT_VIRTUAL_NODES, true, 1.25)));

		final Function<StrategySettings, LoadBalancingStrategy> create;

		Strategy(Function<StrategySettings, LoadBalancingStrategy> create) {
			this.create = create;
		}

	}

	private AtlasLoadBalancer loadBalancer(Strategy strategy) {
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		GrayRules rules = new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true, Set.of(), Map.of(),
				null);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", TestStages.stage(TestStages.discovery(this.fleet), new SnapshotCache(parser), null,
				null, new GrayRouter(SERVICE, rules, this.meters), null));
		LoadBalancingStrategy chosen = strategy.create
			.apply(new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters));
		return TestStages.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
				strategy.name(), chosen, new SnapshotCache(parser), this.stats);
	}

	private static Request<RequestDataContext> request(String version, String user) {
		HttpHeaders headers = new HttpHeaders();
		if (version != null) {
			headers.add("X-Service-Version", version);
		}
		headers.add("X-User-Id", user);
		return new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/users/1"), headers, new LinkedMultiValueMap<>(), Map.of())));
	}

	private static String chosen(AtlasLoadBalancer loadBalancer, Request<?> request) {
		return loadBalancer.choose(request).block().getServer().getInstanceId();
	}

	@ParameterizedTest
	@EnumSource(Strategy.class)
	void choosesInsideTheGrayLane(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		for (int user = 0; user < 50; user++) {
			assertThat(chosen(loadBalancer, request("v2", "u" + user))).isIn("C1", "C2");
			assertThat(chosen(loadBalancer, request(null, "u" + user))).isIn("S1", "S2");
		}
	}

	@ParameterizedTest
	@EnumSource(Strategy.class)
	void aRetryNeverGoesBackToTheInstanceThatFailed(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		for (int user = 0; user < 50; user++) {
			Request<?> retry = new DefaultRequest<>(new RetryableRequestContext(this.s1,
					request(null, "u" + user).getContext().getClientRequest(), "default"));
			assertThat(chosen(loadBalancer, retry)).isEqualTo("S2");
		}
	}

	@ParameterizedTest
	@EnumSource(value = Strategy.class, names = "LEAST_REQUEST")
	void leastRequestReadsTheInFlightCountsOfTheRequestLifecycle(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		for (int i = 0; i < 3; i++) {
			this.stats.started(this.s1);
		}
		for (int user = 0; user < 50; user++) {
			assertThat(chosen(loadBalancer, request(null, "u" + user))).isEqualTo("S2");
		}
	}

	@ParameterizedTest
	@EnumSource(value = Strategy.class, names = "PEAK_EWMA")
	void peakEwmaReadsTheResponseTimesOfTheRequestLifecycle(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		// Nothing in flight: only the response times tell them apart.
		this.stats.started(this.s1);
		this.stats.completed(this.s1, 100_000_000);
		this.stats.started(this.s2);
		this.stats.completed(this.s2, 10_000_000);
		for (int user = 0; user < 50; user++) {
			assertThat(chosen(loadBalancer, request(null, "u" + user))).isEqualTo("S2");
		}
	}

	@ParameterizedTest
	@EnumSource(value = Strategy.class, names = "RING_HASH")
	void aKeyStaysOnOneInstanceAndBoundedLoadReadsTheLiveInFlightCounts(Strategy strategy) {
		AtlasLoadBalancer loadBalancer = loadBalancer(strategy);
		String owner = chosen(loadBalancer, request(null, "hot"));
		for (int i = 0; i < 20; i++) {
			assertThat(chosen(loadBalancer, request(null, "hot"))).isEqualTo(owner);
		}
		// The owner holds 4 requests, the other none: capacity ceil(1.25 × 5 / 2) = 4.
		ServiceInstance held = owner.equals("S1") ? this.s1 : this.s2;
		for (int i = 0; i < 4; i++) {
			this.stats.started(held);
		}
		assertThat(chosen(loadBalancer, request(null, "hot"))).isNotEqualTo(owner).isIn("S1", "S2");
	}

}
