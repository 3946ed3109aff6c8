package dev.atlas.autoconfigure.loadbalancer;

import java.net.URI;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.propagation.AtlasPropagationAutoConfiguration;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Gray routing as wired by the auto-configuration, against the simple discovery client.
 */
class AtlasGrayWiringTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class,
				AtlasPropagationAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
				SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://s1:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://s2:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[2].uri=http://c1:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[2].metadata.version=v2");

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	private static String host(ApplicationContext context, Request<?> request) {
		Response<ServiceInstance> response = Mono
			.from(context.getBean(LoadBalancerClientFactory.class).getInstance("user-service").choose(request))
			.block();
		return response.hasServer() ? response.getServer().getHost() : "none";
	}

	private static Request<RequestDataContext> request(String version) {
		HttpHeaders headers = new HttpHeaders();
		if (version != null) {
			headers.add("X-Service-Version", version);
		}
		return new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/users/1"), headers, new LinkedMultiValueMap<>(), new HashMap<>())));
	}

	@Test
	void headerContextAndBaselineIsolation() {
		this.runner.run((context) -> {
			for (int i = 0; i < 20; i++) {
				assertThat(host(context, request("v2"))).isEqualTo("c1");
				assertThat(host(context, request(null))).isIn("s1", "s2");
			}
			RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v2")));
			assertThat(host(context, request(null))).as("from the inbound request's context").isEqualTo("c1");
		});
	}

	@Test
	void unknownTagFallbackPolicies() {
		this.runner.run((context) -> {
			assertThat(host(context, request("v3"))).isIn("s1", "s2");
			assertThat(context.getBean(MeterRegistry.class)
				.counter("atlas.gray.fallback", "service", "user-service", "policy", "baseline")
				.count()).isEqualTo(1);
		});
		this.runner.withPropertyValues("atlas.services.user-service.gray.fallback=none")
			.run((context) -> assertThat(host(context, request("v3"))).isEqualTo("none"));
	}

	@Test
	void ownTagIsWantedWhenTheRequestNamesNone() {
		this.runner.withPropertyValues("atlas.gray.own-tag=v2")
			.run((context) -> assertThat(host(context, request(null))).isEqualTo("c1"));
	}

	@Test
	void atlasStageWrapsTheSupplierAndGrayCanBeDisabled() {
		// The stage is on top of the discovery chain; with spring-retry present, Spring's
		// retry-aware supplier
		// wraps it.
		this.runner.run((context) -> assertThat(
				AtlasServiceInstanceListSupplier.find(context.getBean(LoadBalancerClientFactory.class)
					.getInstance("user-service", ServiceInstanceListSupplier.class)))
			.isNotNull());
		this.runner.withPropertyValues("atlas.gray.enabled=false").run((context) -> {
			Set<String> hosts = new HashSet<>();
			for (int i = 0; i < 200; i++) {
				hosts.add(host(context, request("v2")));
			}
			assertThat(hosts).as("no lanes: every instance is a candidate").containsExactlyInAnyOrder("s1", "s2", "c1");
		});
	}

	@Test
	void invalidGrayPropertiesFailStartupNamingThem() {
		this.runner.withPropertyValues("atlas.services.user-service.gray.weights.v2=120").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("atlas.services.user-service.gray.weights")
				.contains("between 0 and 100");
		});
		this.runner
			.withPropertyValues("atlas.services.user-service.gray.weights.v2=70",
					"atlas.services.user-service.gray.weights.v3=40")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains("atlas.services.user-service.gray.weights")
					.contains("more than 100");
			});
		this.runner.withPropertyValues("atlas.gray.fallback=nowhere").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("atlas.gray.fallback")
				.contains("allowed values: baseline, all, none");
		});
	}

	private static String messages(Throwable failure) {
		StringBuilder all = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			all.append(t.getMessage()).append('\n');
		}
		return all.toString();
	}

}
