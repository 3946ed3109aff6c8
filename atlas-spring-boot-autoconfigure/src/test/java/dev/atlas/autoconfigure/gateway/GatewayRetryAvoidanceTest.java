package dev.atlas.autoconfigure.gateway;

import java.net.URI;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway retry through Atlas's whole stage, with the request the gateway builds: a
 * plain {@link RequestDataContext} whose attributes are the exchange's, holding the
 * previous choice under the gateway's attribute. Three instances, ring-hash on a user id,
 * so every attempt of one user lands on one instance unless something takes it out.
 */
class GatewayRetryAvoidanceTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://s1:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://s2:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[2].uri=http://s3:8080",
				"atlas.loadbalancer.strategy=ring-hash", "atlas.loadbalancer.hash.header=X-User-Id");

	private static ServiceInstance choose(ApplicationContext context, String user, Map<String, Object> attributes) {
		return choose(context, new RequestDataContext(request(user, attributes)));
	}

	private static ServiceInstance choose(ApplicationContext context, RequestDataContext request) {
		ReactorServiceInstanceLoadBalancer balancer = context.getBean(LoadBalancerClientFactory.class)
			.getInstance("user-service", ReactorServiceInstanceLoadBalancer.class);
		Response<ServiceInstance> response = Mono.from(balancer.choose(new DefaultRequest<>(request))).block();
		assertThat(response).isNotNull();
		assertThat(response.hasServer()).isTrue();
		return response.getServer();
	}

	private static RequestData request(String user, Map<String, Object> attributes) {
		HttpHeaders headers = new HttpHeaders();
		headers.set("X-User-Id", user);
		return new RequestData(HttpMethod.GET, URI.create("http://user-service/users/1"), headers,
				new LinkedMultiValueMap<>(), attributes);
	}

	/** The exchange's attributes after an attempt that went to {@code instance}. */
	private static Map<String, Object> afterAttemptOn(ServiceInstance instance) {
		Map<String, Object> attributes = new HashMap<>();
		attributes.put(GatewayRetryAvoidance.LOAD_BALANCER_RESPONSE_ATTRIBUTE, new DefaultResponse(instance));
		attributes.put("retry_iteration", 0);
		return attributes;
	}

	/** A new object for the same instance, as a registry refresh produces. */
	private static ServiceInstance copyOf(ServiceInstance instance) {
		return new DefaultServiceInstance(instance.getInstanceId(), instance.getServiceId(), instance.getHost(),
				instance.getPort(), instance.isSecure());
	}

	@Test
	void aGatewayRetryGoesToAnotherInstanceThanTheOneThatJustFailed() {
		this.runner.withUserConfiguration(AtlasGatewayRetryConfiguration.class).run((context) -> {
			for (int user = 0; user < 30; user++) {
				ServiceInstance first = choose(context, "u" + user, new HashMap<>());
				assertThat(choose(context, "u" + user, new HashMap<>()).getHost()).as("same user, first attempt")
					.isEqualTo(first.getHost());
				ServiceInstance retry = choose(context, "u" + user, afterAttemptOn(copyOf(first)));
				assertThat(retry.getHost()).as("retry of user u" + user).isNotEqualTo(first.getHost());
			}
		});
	}

	@Test
	void withoutItAGatewayRetryLandsOnTheFailedInstanceAgain() {
		// What the gateway gets from Atlas's built-in filters alone: the gateway's
		// request is
		// not a RetryableRequestContext, so the hash sends the retry to the failed
		// instance.
		this.runner.run((context) -> {
			ServiceInstance first = choose(context, "u1", new HashMap<>());
			assertThat(choose(context, "u1", afterAttemptOn(first)).getHost()).isEqualTo(first.getHost());
		});
	}

	@Test
	void theOnlyInstanceIsRetriedRatherThanNoInstance() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
							SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withUserConfiguration(AtlasGatewayRetryConfiguration.class)
			.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://s1:8080")
			.run((context) -> {
				ServiceInstance only = choose(context, "u1", new HashMap<>());
				assertThat(choose(context, "u1", afterAttemptOn(only)).getHost()).isEqualTo(only.getHost());
			});
	}

	@Test
	void aClientRetryIsLeftToRetryAvoidance() {
		ServiceInstance previous = new DefaultServiceInstance("a", "user-service", "s1", 8080, false);
		RetryableRequestContext clientRetry = new RetryableRequestContext(previous,
				request("u1", afterAttemptOn(previous)));
		assertThat(GatewayRetryAvoidance.previous(new DefaultRequest<>(clientRetry))).isNull();
		assertThat(GatewayRetryAvoidance
			.previous(new DefaultRequest<>(new RequestDataContext(request("u1", afterAttemptOn(previous))))))
			.isSameAs(previous);
		assertThat(
				GatewayRetryAvoidance.previous(new DefaultRequest<>(new RequestDataContext(request("u1", Map.of())))))
			.isNull();
		assertThat(GatewayRetryAvoidance.previous(null)).isNull();
	}

	@Test
	void retriesOfManyUsersSpreadOverTheOtherInstances() {
		this.runner.withUserConfiguration(AtlasGatewayRetryConfiguration.class).run((context) -> {
			Set<String> retriedOn = new HashSet<>();
			ServiceInstance failed = choose(context, "u0", new HashMap<>());
			for (int user = 0; user < 50; user++) {
				retriedOn.add(choose(context, "u" + user, afterAttemptOn(failed)).getHost());
			}
			assertThat(retriedOn).doesNotContain(failed.getHost()).hasSize(2);
		});
	}

}
