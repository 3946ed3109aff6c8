package dev.atlas.loadbalancer.pipeline;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.RetryAwareServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AtlasLoadBalancer} over Atlas's stage: when the stage is on top of the chain (or
 * right below Spring's retry-aware supplier) the load balancer applies it inline; with
 * any other supplier on top it subscribes through the stage. Every routing input must
 * give the same choice on all three paths.
 */
class AtlasLoadBalancerStageTest {

	private final List<ServiceInstance> fleet = List.of(instance("S1"), instance("S2"), instance("C1", "version", "v2"),
			instance("C3", "version", "v3"));

	private final AtomicBoolean emitOnAnotherThread = new AtomicBoolean();

	private final List<String> selected = new CopyOnWriteArrayList<>();

	/** Wants to know the choice, as Spring's same-instance-preference supplier does. */
	private final ServiceInstanceListSupplier discovery = new Discovery();

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	private AtlasLoadBalancer loadBalancer(Top top) {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", meters);
		GrayRules rules = new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true, Set.of(), Map.of(),
				null);
		AtlasServiceInstanceListSupplier stage = TestStages.stage(this.discovery, new SnapshotCache(parser), null, null,
				new GrayRouter(SERVICE, rules, meters), null);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", top.wrap.apply(stage));
		return TestStages.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
				new WeightedRandomBalancer(
						new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters)),
				parser);
	}

	private static Request<RequestDataContext> request(String version) {
		HttpHeaders headers = new HttpHeaders();
		if (version != null) {
			headers.add("X-Service-Version", version);
		}
		return new DefaultRequest<>(new RequestDataContext(data(headers)));
	}

	private static RequestData data(HttpHeaders headers) {
		return new RequestData(HttpMethod.GET, URI.create("http://user-service/users/1"), headers,
				new LinkedMultiValueMap<>(), Map.of());
	}

	private static String chosen(Mono<Response<ServiceInstance>> response) {
		return response.block().getServer().getInstanceId();
	}

	@ParameterizedTest
	@EnumSource(Top.class)
	void theOutboundHeaderPicksTheLane(Top top) {
		AtlasLoadBalancer loadBalancer = loadBalancer(top);
		for (int i = 0; i < 20; i++) {
			assertThat(chosen(loadBalancer.choose(request("v2")))).isEqualTo("C1");
			assertThat(chosen(loadBalancer.choose(request(null)))).isIn("S1", "S2");
		}
	}

	@ParameterizedTest
	@EnumSource(Top.class)
	void theReactorContextWinsOverTheThreadsContext(Top top) {
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v3")));
		AtlasLoadBalancer loadBalancer = loadBalancer(top);
		assertThat(chosen(loadBalancer.choose(request(null))
			.contextWrite((context) -> context.put(RoutingContextHolder.KEY,
					RoutingContext.of(Map.of("X-Service-Version", "v2"))))))
			.isEqualTo("C1");
		assertThat(chosen(loadBalancer.choose(request(null)))).isEqualTo("C3");
	}

	@ParameterizedTest
	@EnumSource(Top.class)
	void theCallingThreadsContextHoldsWhenTheListArrivesOnAnotherThread(Top top) {
		this.emitOnAnotherThread.set(true);
		AtlasLoadBalancer loadBalancer = loadBalancer(top);
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v3")));
		for (int i = 0; i < 20; i++) {
			assertThat(chosen(loadBalancer.choose(request(null)))).isEqualTo("C3");
		}
	}

	@ParameterizedTest
	@EnumSource(Top.class)
	void suppliersBelowTheStageAreToldTheChoice(Top top) {
		AtlasLoadBalancer loadBalancer = loadBalancer(top);
		assertThat(chosen(loadBalancer.choose(request("v2")))).isEqualTo("C1");
		assertThat(chosen(loadBalancer.choose(request("v3")))).isEqualTo("C3");
		assertThat(this.selected).containsExactly("C1", "C3");
	}

	@ParameterizedTest
	@EnumSource(Top.class)
	void aRetryAvoidsTheInstanceThatFailed(Top top) {
		AtlasLoadBalancer loadBalancer = loadBalancer(top);
		Request<RetryableRequestContext> retry = new DefaultRequest<>(
				new RetryableRequestContext(instance("S1"), data(new HttpHeaders()), "hint"));
		for (int i = 0; i < 50; i++) {
			assertThat(chosen(loadBalancer.choose(retry))).isEqualTo("S2");
		}
	}

	/** How the stage sits in the chain. */
	enum Top {

		/** The stage is the top: applied inline. */
		STAGE((stage) -> stage),

		/** Spring's retry-aware supplier over the stage: applied inline. */
		RETRY_AWARE(RetryAwareServiceInstanceListSupplier::new),

		/** Someone's own supplier over the stage: subscribed through. */
		OTHER(PassThrough::new);

		final Function<AtlasServiceInstanceListSupplier, ServiceInstanceListSupplier> wrap;

		Top(Function<AtlasServiceInstanceListSupplier, ServiceInstanceListSupplier> wrap) {
			this.wrap = wrap;
		}

	}

	private final class Discovery implements ServiceInstanceListSupplier, SelectedInstanceCallback {

		@Override
		public void selectedServiceInstance(ServiceInstance serviceInstance) {
			AtlasLoadBalancerStageTest.this.selected.add(serviceInstance.getInstanceId());
		}

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			Flux<List<ServiceInstance>> lists = Flux.just(AtlasLoadBalancerStageTest.this.fleet);
			// A cache miss: the registry answers on a scheduler thread, not the calling
			// one.
			return AtlasLoadBalancerStageTest.this.emitOnAnotherThread.get() ? lists.publishOn(Schedulers.single())
					: lists;
		}

	}

	/** A supplier of the application's own, on top of the stage. */
	static final class PassThrough extends DelegatingServiceInstanceListSupplier {

		PassThrough(ServiceInstanceListSupplier delegate) {
			super(delegate);
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return this.delegate.get();
		}

		@Override
		@SuppressWarnings("rawtypes")
		public Flux<List<ServiceInstance>> get(Request request) {
			return this.delegate.get(request);
		}

	}

}
