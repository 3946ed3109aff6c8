package dev.atlas.sample.gateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.sample.registry.EmbeddedRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.MapPropertySource;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The gateway's {@code Retry} filter (gateway.yml) with Atlas: a retry goes to another
 * instance than the one that just failed ({@code GatewayRetryAvoidance}), even when the
 * strategy would choose that one again. Three user-services in JVMs of their own, the
 * gateway in this JVM balancing by ring hash on {@code X-User-Id} (so every attempt of
 * one user goes to one instance unless something takes it out) with outlier ejection off
 * (so only the retry can help). One user-service is killed (SIGKILL: the registry keeps
 * listing it until its session expires): each request of a user whose instance it was
 * meets a refused connection, and must be answered by another instance on the retry.
 *
 * <p>
 * Then a second gateway with outlier detection on, in front of the same instances: it
 * ejects the dead one, after which no attempt goes to it.
 *
 * <p>
 * Seen failing: with {@code -Dgateway-retry.no-avoidance=true} (the gateway without
 * {@code GatewayRetryAvoidance}) every such request fails, the three attempts all going
 * to the dead instance.
 */
class GatewayRetryIT {

	static final int USERS = 60;

	@SuppressWarnings("unchecked")
	private static int portOf(ResponseEntity<Map<String, Object>> response) {
		Map<String, Object> user = response.getBody();
		assertThat(user).isNotNull();
		return ((Number) ((Map<String, Object>) user.get("servedBy")).get("port")).intValue();
	}

	@Test
	void aRetryAvoidsTheInstanceThatJustFailedAndOutlierEjectionTakesItOut() throws Exception {
		boolean avoidance = !Boolean.getBoolean("gateway-retry.no-avoidance");
		List<ForkedSample> providers = new ArrayList<>();
		ConfigurableApplicationContext edge = null;
		EmbeddedRegistry registry = EmbeddedRegistry.start(0);
		try {
			List<Integer> ports = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				int port = freePort();
				ports.add(port);
				providers.add(ForkedSample.start("sample.user-service.jar", "retry-user-service-" + port,
						List.of("--server.port=" + port, "--management.server.port=0",
								"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
								"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s")));
			}
			SpringApplicationBuilder gatewayApp = GatewayApplication.application();
			if (!avoidance) {
				// the contrast run: without Atlas's gateway auto-configuration (this test
				// configures no lane rule, so GatewayRetryAvoidance is all it takes away)
				gatewayApp.properties("spring.autoconfigure.exclude="
						+ "dev.atlas.autoconfigure.gateway.AtlasGatewayAutoConfiguration");
			}
			edge = gatewayApp.run("--server.port=0", "--management.server.port=0",
					"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
					"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s", "--atlas.warmup.enabled=false",
					"--atlas.outlier.enabled=false", "--atlas.loadbalancer.strategy=ring-hash",
					"--atlas.loadbalancer.hash.header=X-User-Id");
			DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
			await().atMost(Duration.ofSeconds(120))
				.until(() -> discovery.getInstances("user-service")
					.stream()
					.map(ServiceInstance::getPort)
					.sorted()
					.toList()
					.equals(ports.stream().sorted().toList()));
			RestClient gateway = RestClient
				.create("http://127.0.0.1:" + ((WebServerApplicationContext) edge).getWebServer().getPort());

			// where each user goes while all three are up
			Map<String, Integer> home = new LinkedHashMap<>();
			for (int u = 0; u < USERS; u++) {
				String user = "user-" + u;
				home.put(user, portOf(get(gateway, user)));
			}
			int dead = ports.get(0);
			List<String> usersOfDead = home.entrySet()
				.stream()
				.filter((entry) -> entry.getValue() == dead)
				.map(Map.Entry::getKey)
				.toList();
			assertThat(usersOfDead).as("users whose instance is killed").isNotEmpty();

			providers.get(0).kill();
			List<String> failures = new ArrayList<>();
			List<Integer> answeredBy = new ArrayList<>();
			for (String user : usersOfDead) {
				try {
					answeredBy.add(portOf(get(gateway, user)));
				}
				catch (RuntimeException ex) {
					failures.add(user + ": " + ex.getMessage());
				}
			}
			boolean stillListed = discovery.getInstances("user-service")
				.stream()
				.anyMatch((instance) -> instance.getPort() == dead);
			System.out.printf(
					"[gateway retry%s] %d of %d users on the killed instance :%d; their requests after the"
							+ " kill: %d answered (by %s), %d failed%s; the killed instance still listed: %b%n",
					avoidance ? "" : ", no GatewayRetryAvoidance", usersOfDead.size(), USERS, dead, answeredBy.size(),
					answeredBy.stream().distinct().sorted().toList(), failures.size(),
					failures.isEmpty() ? "" : " (first: " + failures.get(0) + ")", stillListed);

			assertThat(stillListed).as("the killed instance is still listed (else the test proves nothing)").isTrue();
			assertThat(failures).as("failed requests").isEmpty();
			assertThat(answeredBy).doesNotContain(dead);
			if (avoidance) {
				retriesRefusedByTheBudget(edge, gateway, usersOfDead, dead);
				outlierEjectionThroughTheGateway(registry, dead);
			}
		}
		finally {
			if (edge != null) {
				edge.close();
			}
			for (ForkedSample provider : providers) {
				provider.close();
			}
			registry.close();
		}
	}

	/**
	 * The same dead instance (still listed) behind a second gateway with outlier
	 * detection on (Atlas's defaults: ejected after 5 gateway failures in a row, for 30
	 * s) and the default strategy: the gateway reports its attempts to Atlas, which
	 * ejects the instance; from then on no attempt goes to it, and no request fails
	 * meanwhile.
	 */
	private static void outlierEjectionThroughTheGateway(EmbeddedRegistry registry, int dead) {
		try (ConfigurableApplicationContext edge = GatewayApplication.application()
			.run("--server.port=0", "--management.server.port=0",
					"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
					"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s", "--atlas.warmup.enabled=false",
					// counts the attempts per instance (Spring Cloud's meters are opt-in)
					"--spring.cloud.loadbalancer.stats.micrometer.enabled=true")) {
			RestClient gateway = RestClient
				.create("http://127.0.0.1:" + ((WebServerApplicationContext) edge).getWebServer().getPort());
			MeterRegistry meters = edge.getBean(MeterRegistry.class);
			List<String> failures = new ArrayList<>();
			int[] sent = { 0 };
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				for (int i = 0; i < 10; i++) {
					sent[0]++;
					try {
						assertThat(portOf(get(gateway, "user-" + sent[0]))).isNotEqualTo(dead);
					}
					catch (RuntimeException ex) {
						failures.add(ex.getMessage());
					}
				}
				Gauge ejected = meters.find(OutlierDetector.EJECTED_METER).tag("service", "user-service").gauge();
				assertThat(ejected).isNotNull();
				assertThat(ejected.value()).as("user-service instances ejected").isEqualTo(1.0);
			});
			long attemptsOnDead = failedAttempts(meters, dead);
			int before = sent[0];
			for (int i = 0; i < 300; i++) {
				sent[0]++;
				try {
					assertThat(portOf(get(gateway, "user-" + sent[0]))).isNotEqualTo(dead);
				}
				catch (RuntimeException ex) {
					failures.add(ex.getMessage());
				}
			}
			System.out.printf(
					"[gateway outlier ejection] dead instance :%d ejected after %d requests (%d failed attempts on it,"
							+ " retried elsewhere); the next %d requests: %d attempts on it; failed requests: %d%n",
					dead, before, attemptsOnDead, sent[0] - before, failedAttempts(meters, dead) - attemptsOnDead,
					failures.size());
			assertThat(attemptsOnDead).as("failed attempts on the dead instance before its ejection").isPositive();
			assertThat(failedAttempts(meters, dead)).as("attempts on the dead instance while ejected")
				.isEqualTo(attemptsOnDead);
			assertThat(failures).as("failed requests").isEmpty();
		}
	}

	/** The gateway's failed attempts on the instance listening on a port. */
	private static long failedAttempts(MeterRegistry meters, int port) {
		return meters.find("loadbalancer.requests.failed")
			.tag("serviceInstance.port", String.valueOf(port))
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

	/**
	 * With a budget that allows no retry (set at runtime: ratio 0, no minimum), the
	 * gateway's {@code Retry} does not retry: each request of a user of the killed
	 * instance fails with the refused connection, each counted once in
	 * {@code atlas.retry.budget.exhausted} however many attempts the filter has left.
	 */
	private static void retriesRefusedByTheBudget(ConfigurableApplicationContext edge, RestClient gateway,
			List<String> usersOfDead, int dead) {
		Map<String, Object> noRetries = Map.of("atlas.services.user-service.retry.budget.ratio", "0",
				"atlas.services.user-service.retry.budget.min-retries-per-second", "0");
		edge.getEnvironment().getPropertySources().addFirst(new MapPropertySource("no-retries", noRetries));
		edge.publishEvent(new EnvironmentChangeEvent(edge, noRetries.keySet()));
		try {
			double refusedBefore = refused(edge);
			int failed = 0;
			for (String user : usersOfDead) {
				try {
					assertThat(portOf(get(gateway, user))).isNotEqualTo(dead);
				}
				catch (RuntimeException expected) {
					failed++;
				}
			}
			System.out.printf("[gateway retry] budget of no retries: %d of %d requests failed, %.0f retries refused%n",
					failed, usersOfDead.size(), refused(edge) - refusedBefore);
			assertThat(failed).as("requests whose first attempt met the killed instance").isEqualTo(usersOfDead.size());
			assertThat(refused(edge) - refusedBefore).isEqualTo(usersOfDead.size());
		}
		finally {
			edge.getEnvironment().getPropertySources().remove("no-retries");
			edge.publishEvent(new EnvironmentChangeEvent(edge, noRetries.keySet()));
		}
	}

	private static double refused(ConfigurableApplicationContext edge) {
		FunctionCounter counter = edge.getBean(MeterRegistry.class)
			.find("atlas.retry.budget.exhausted")
			.tag("service", "user-service")
			.functionCounter();
		return (counter != null) ? counter.count() : 0;
	}

	private static ResponseEntity<Map<String, Object>> get(RestClient gateway, String user) {
		return gateway.get()
			.uri("/api/users/1")
			.header("X-User-Id", user)
			.retrieve()
			.toEntity(new ParameterizedTypeReference<Map<String, Object>>() {
			});
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
