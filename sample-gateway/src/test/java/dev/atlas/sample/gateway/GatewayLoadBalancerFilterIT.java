package dev.atlas.sample.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.autoconfigure.overload.ReactiveOverloadMarkerFilter;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.sample.registry.EmbeddedRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The gateway's load-balancer filter with Atlas, in front of one user-service in a JVM of
 * its own, registered with the IPv6 literal host {@code ::1} (no brackets, as Nacos lists
 * IPv6 instances) and answering 300 ms late; the sample gateway in this JVM balances by
 * {@code least-request}.
 * <ul>
 * <li>A client that gives up before the answer (here after 50 ms) leaves nothing in
 * flight: Spring Cloud's filter completed a request's lifecycle only on a response or an
 * error, so each such request stayed counted in flight on its instance for ever.</li>
 * <li>Percent-encoded and non-ASCII paths and queries reach the IPv6 instance: Spring
 * Cloud's {@code LoadBalancerUriTools} rebuilt such a URI with the unbracketed host and
 * failed ({@code Invalid character ':' for HOST_IPV4}), which the gateway answered with
 * 500.</li>
 * </ul>
 */
class GatewayLoadBalancerFilterIT {

	private static EmbeddedRegistry registry;

	private static ForkedSample provider;

	private static ConfigurableApplicationContext edge;

	private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@BeforeAll
	static void start() throws Exception {
		registry = EmbeddedRegistry.start(0);
		provider = ForkedSample.start("sample.user-service.jar", "ipv6-user-service",
				List.of("--server.port=0", "--management.server.port=0",
						"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
						"--spring.cloud.zookeeper.discovery.instance-host=::1", "--spring.main.banner-mode=off",
						"--atlas.lifecycle.drain=0s", "--sample.delay=300ms"));
		edge = GatewayApplication.application()
			.sources(CountedAttempts.class)
			.run("--server.port=0", "--management.server.port=0",
					"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
					"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s",
					"--atlas.services.user-service.loadbalancer.strategy=least-request");
		DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
		await().atMost(Duration.ofSeconds(120)).until(() -> !discovery.getInstances("user-service").isEmpty());
		assertThat(discovery.getInstances("user-service")).singleElement()
			.extracting(ServiceInstance::getHost)
			.isEqualTo("::1");
	}

	@AfterAll
	static void stop() throws Exception {
		if (edge != null) {
			edge.close();
		}
		if (provider != null) {
			provider.close();
		}
		if (registry != null) {
			registry.close();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "/api/users/1", "/api/users/%31", "/api/users/1?name=%E6%B5%8B%E8%AF%95",
			"/api/users/1?name=a%20b%26c" })
	void anIpv6InstanceIsReachedWhateverTheUri(String pathAndQuery) throws Exception {
		HttpResponse<String> response = http.send(HttpRequest.newBuilder(gateway(pathAndQuery)).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as("%s: %s", pathAndQuery, response.body()).isEqualTo(200);
		assertThat(response.body()).contains("\"id\":1");
	}

	@Test
	void theGatewayHasNoOverloadMarkerOfItsOwn() {
		// a WebFlux application, but the gateway answers its clients without the marker
		assertThat(edge.getBeansOfType(ReactiveOverloadMarkerFilter.class)).isEmpty();
	}

	@Test
	void clientsThatGoAwayBeforeTheAnswerLeaveNothingInFlight() throws Exception {
		InstanceStats stats = edge.getBean(LoadBalancerClientFactory.class)
			.getInstance("user-service", InstanceStats.class);
		// one answered call first: the service's load balancer exists
		assertThat(
				http.send(HttpRequest.newBuilder(gateway("/api/users/1")).build(), HttpResponse.BodyHandlers.ofString())
					.statusCode())
			.isEqualTo(200);
		long before = stats.totalRequests();
		for (int i = 0; i < 10; i++) {
			HttpRequest impatient = HttpRequest.newBuilder(gateway("/api/users/" + i))
				.timeout(Duration.ofMillis(50))
				.build();
			assertThatThrownBy(() -> http.send(impatient, HttpResponse.BodyHandlers.ofString()))
				.isInstanceOf(HttpTimeoutException.class);
		}
		// sent to the instance (one could time out before that on a very slow machine)
		assertThat(stats.totalRequests() - before).isGreaterThan(6);
		await().atMost(Duration.ofSeconds(5)).until(() -> stats.inFlightTotal() == 0);
		// the instance's late answers come to nothing: no second completion
		CountedAttempts attempts = edge.getBean(CountedAttempts.class);
		await().during(Duration.ofMillis(600))
			.atMost(Duration.ofSeconds(3))
			.until(() -> attempts.completed.get() == attempts.started.get());
		assertThat(stats.inFlightTotal()).isZero();
	}

	private static URI gateway(String pathAndQuery) {
		return URI
			.create("http://127.0.0.1:" + ((WebServerApplicationContext) edge).getWebServer().getPort() + pathAndQuery);
	}

	/**
	 * Counts the request lifecycle's starts and completions of every balanced attempt (a
	 * lifecycle bean of the application is one of every service's).
	 */
	static class CountedAttempts implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

		final AtomicInteger started = new AtomicInteger();

		final AtomicInteger completed = new AtomicInteger();

		@Override
		public void onStart(Request<Object> request) {
		}

		@Override
		public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
			this.started.incrementAndGet();
		}

		@Override
		public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
			if (completionContext.status() != CompletionContext.Status.DISCARD) {
				this.completed.incrementAndGet();
			}
		}

	}

}
