package dev.atlas.loadbalancer.pipeline;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.pipeline.TestStages.request;
import static org.assertj.core.api.Assertions.assertThat;

class AtlasServiceInstanceListSupplierTest {

	private final List<ServiceInstance> fleet = List.of(instance("S1"), instance("C1", "version", "v2"),
			instance("C3", "version", "v3"));

	private final ServiceInstanceListSupplier discovery = TestStages.discovery(this.fleet);

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	private AtlasServiceInstanceListSupplier supplier(String ownTag) {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		GrayRules rules = new GrayRules("X-Service-Version", ownTag, GrayFallback.BASELINE, true, Set.of(), Map.of(),
				null);
		return TestStages.stage(this.discovery,
				new SnapshotCache(new InstanceAttributesParser(SERVICE, "version", meters)), null, null,
				new GrayRouter(SERVICE, rules, meters), null);
	}

	private static List<String> ids(Flux<List<ServiceInstance>> lane) {
		return lane.blockFirst().stream().map(ServiceInstance::getInstanceId).toList();
	}

	@Test
	void outboundHeaderWins() {
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v3")));
		assertThat(ids(supplier("v3").get(request("v2")))).containsExactly("C1");
	}

	@Test
	void reactorContextThenThreadContextThenOwnTag() {
		RoutingContextHolder.set(RoutingContext.of(Map.of("x-service-version", "v3")));
		assertThat(ids(supplier(null).get(request(null))
			.contextWrite(
					(ctx) -> ctx.put(RoutingContextHolder.KEY, RoutingContext.of(Map.of("X-Service-Version", "v2"))))))
			.containsExactly("C1");
		assertThat(ids(supplier(null).get(request(null)))).containsExactly("C3");
		RoutingContextHolder.clear();
		assertThat(ids(supplier("V2").get(request(null)))).containsExactly("C1");
		assertThat(ids(supplier(null).get(request(null)))).containsExactly("S1");
		assertThat(ids(supplier(null).get())).containsExactly("S1");
	}

	@Test
	void aRetryAvoidsTheInstanceThatFailedEvenAsANewObject() {
		// The registry client produced new objects since the first attempt: match by
		// instance id.
		ServiceInstance failedCopy = instance("S1");
		Request<RetryableRequestContext> retry = new DefaultRequest<>(new RetryableRequestContext(failedCopy,
				new RequestData(HttpMethod.GET, URI.create("http://user-service/users/1"), new HttpHeaders(),
						new LinkedMultiValueMap<>(), Map.of()),
				"hint"));
		assertThat(ids(supplier("v2").get(request("v2")))).containsExactly("C1");
		assertThat(ids(supplier(null).get(retry))).as("S1 was the only baseline instance: kept").containsExactly("S1");
		List<ServiceInstance> two = List.of(instance("S1"), instance("S2"));
		assertThat(RetryAvoidance
			.avoid(InstanceSnapshot.of(two,
					new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry())), failedCopy)
			.stream()
			.map(ServiceInstance::getInstanceId)).containsExactly("S2");
	}

	@Test
	void lanesAreStableObjectsPerRefreshSoBalancersMemoize() {
		AtlasServiceInstanceListSupplier supplier = supplier(null);
		assertThat(supplier.get(request("v2")).blockFirst()).isSameAs(supplier.get(request("v2")).blockFirst());
	}

}
