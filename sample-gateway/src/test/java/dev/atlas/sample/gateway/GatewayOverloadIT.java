package dev.atlas.sample.gateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.sample.registry.EmbeddedRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Overload across three hops of the samples: the gateway (its {@code Retry} filter on the
 * orders route: two retries of a 503) → order-service → two user-services capped at 2
 * requests at once (300 ms each; above that a 503 at once), under a closed loop of 24
 * clients, several times what the user-services hold. order-service retries a 503 on the
 * other user-service within its retry budget; when that retry is answered 503 again, or
 * its budget refuses it, its own 503 says {@code X-Atlas-Overloaded: true}, and the
 * gateway with Atlas does not retry it. The same load through a gateway without Atlas's
 * gateway support (its {@code Retry} filter retries every 503) is measured for
 * comparison. Attempts at user-service are read from order-service's {@code atlas.picks};
 * the budgets have no reserve per second (see below).
 */
class GatewayOverloadIT {

	private static final int CLIENTS = 24;

	private static final Duration RUN = Duration.ofSeconds(5);

	private static final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private static EmbeddedRegistry registry;

	private static final List<ForkedSample> services = new ArrayList<>();

	private static int orderManagementPort;

	@BeforeAll
	static void start() throws Exception {
		registry = EmbeddedRegistry.start(0);
		List<String> common = List.of("--server.port=0",
				"--spring.cloud.zookeeper.connect-string=" + registry.connectString(), "--spring.main.banner-mode=off",
				"--atlas.lifecycle.drain=0s");
		for (int i = 0; i < 2; i++) {
			List<String> args = new ArrayList<>(common);
			args.addAll(List.of("--management.server.port=0", "--sample.capacity=2", "--sample.delay=300ms"));
			services.add(ForkedSample.start("sample.user-service.jar", "capped-user-service-" + i, args));
		}
		orderManagementPort = freePort();
		List<String> args = new ArrayList<>(common);
		// No reserve of retries per second in the budgets (10 by default): at the dozen
		// requests per second this machine drives through three hops, the reserve would
		// allow most retries, and the test would measure it instead of the ratio.
		args.addAll(List.of("--management.server.port=" + orderManagementPort, "--atlas.warmup.enabled=false",
				"--atlas.retry.budget.min-retries-per-second=0"));
		services.add(ForkedSample.start("sample.order-service.jar", "overload-order-service", args));
	}

	@AfterAll
	static void stop() throws Exception {
		for (ForkedSample service : services) {
			service.close();
		}
		if (registry != null) {
			registry.close();
		}
	}

	@Test
	void theMarkerKeepsTheGatewayFromRetryingWhatOrderServiceGaveUpOn() throws Exception {
		Run atlas;
		try (ConfigurableApplicationContext edge = gateway(false)) {
			atlas = load(edge, false);
		}
		Run plain;
		try (ConfigurableApplicationContext edge = gateway(true)) {
			plain = load(edge, true);
		}
		System.out.println("[gateway overload] gateway with Atlas: " + atlas);
		System.out.println("[gateway overload] gateway without Atlas's gateway support: " + plain);
		assertThat(plain.orderAttemptsPerRequest()).as("without the marker, the gateway retries order-service's 503s")
			.isGreaterThan(1.2);
		assertThat(atlas.orderAttemptsPerRequest())
			.as("with it, what order-service retried or gave up on is not retried again")
			.isLessThanOrEqualTo(1.1);
		// order-service's budget: 20 % of its requests
		assertThat(atlas.userAttemptsPerRequest()).isLessThanOrEqualTo(1.3).isLessThan(plain.userAttemptsPerRequest());
	}

	/**
	 * The sample gateway in this JVM; {@code plain}: without Atlas's gateway support (no
	 * retry budget, the marker not read).
	 */
	private static ConfigurableApplicationContext gateway(boolean plain) {
		var application = GatewayApplication.application();
		if (plain) {
			application.properties(
					"spring.autoconfigure.exclude=dev.atlas.autoconfigure.gateway.AtlasGatewayAutoConfiguration");
		}
		ConfigurableApplicationContext edge = application.run("--server.port=0", "--management.server.port=0",
				"--spring.cloud.zookeeper.connect-string=" + registry.connectString(), "--spring.main.banner-mode=off",
				"--atlas.lifecycle.drain=0s", "--atlas.warmup.enabled=false",
				"--atlas.retry.budget.min-retries-per-second=0");
		DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
		await().atMost(Duration.ofSeconds(120))
			.until(() -> discovery.getInstances("order-service").size() == 1
					&& discovery.getInstances("user-service").size() == 2);
		return edge;
	}

	private static Run load(ConfigurableApplicationContext edge, boolean plain) throws Exception {
		int port = ((WebServerApplicationContext) edge).getWebServer().getPort();
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/orders/1"))
			.timeout(Duration.ofSeconds(10))
			.build();
		// warm-up: the first calls create the load balancers
		http.send(request, HttpResponse.BodyHandlers.discarding());
		long orderBefore = gatewayAttempts(edge);
		long userBefore = userAttempts();
		AtomicInteger requests = new AtomicInteger();
		AtomicInteger succeeded = new AtomicInteger();
		long end = System.nanoTime() + RUN.toNanos();
		ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
		try {
			List<Future<?>> loops = new ArrayList<>();
			for (int c = 0; c < CLIENTS; c++) {
				loops.add(pool.submit(() -> {
					while (System.nanoTime() < end) {
						requests.incrementAndGet();
						HttpResponse<Void> response = http.send(request, HttpResponse.BodyHandlers.discarding());
						if (response.statusCode() == 200) {
							succeeded.incrementAndGet();
						}
						if (!plain) {
							assertThat(response.headers().firstValue("X-Atlas-Overloaded"))
								.as("the marker never leaves the gateway")
								.isEmpty();
						}
					}
					return null;
				}));
			}
			for (Future<?> loop : loops) {
				loop.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		return new Run(requests.get(), succeeded.get(), gatewayAttempts(edge) - orderBefore,
				userAttempts() - userBefore);
	}

	/** The gateway's attempts at order-service (Atlas's request statistics). */
	private static long gatewayAttempts(ConfigurableApplicationContext edge) {
		FunctionCounter picks = edge.getBean(MeterRegistry.class)
			.find("atlas.picks")
			.tag("service", "order-service")
			.functionCounter();
		return (picks != null) ? (long) picks.count() : 0;
	}

	/** order-service's attempts at user-service, from its Prometheus scrape. */
	private static long userAttempts() throws IOException, InterruptedException {
		String scrape = http
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + orderManagementPort + "/actuator/prometheus"))
				.build(), HttpResponse.BodyHandlers.ofString())
			.body();
		double sum = 0;
		for (String line : scrape.split("\n")) {
			if (line.startsWith("atlas_picks_total{") && line.contains("service=\"user-service\"")) {
				sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
			}
		}
		return (long) sum;
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	/** What one closed loop of {@link #CLIENTS} through one gateway cost. */
	record Run(int requests, int succeeded, long orderAttempts, long userAttempts) {

		double orderAttemptsPerRequest() {
			return (double) this.orderAttempts / this.requests;
		}

		double userAttemptsPerRequest() {
			return (double) this.userAttempts / this.requests;
		}

		@Override
		public String toString() {
			return String.format(
					"%d gateway requests (%d answered 200), per request %.2f attempts at order-service"
							+ " and %.2f at user-service",
					this.requests, this.succeeded, orderAttemptsPerRequest(), userAttemptsPerRequest());
		}

	}

}
