package dev.atlas.sample.order;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.atlas.autoconfigure.lifecycle.GracefulShutdown;
import dev.atlas.sample.registry.EmbeddedRegistry;
import dev.atlas.sample.user.ServedRequests;
import dev.atlas.sample.user.UserServiceApplication;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The zero-downtime acceptance test (graceful shutdown, end to end): a real registry
 * (in-process ZooKeeper), user-service ×3 and order-service (spring-retry on its
 * classpath), all in this JVM. The test drives a closed loop of {@value #CONCURRENCY}
 * concurrent {@code GET /orders/{id}} calls through order-service for the whole run while
 * each user-service in turn is closed (what SIGTERM does) and a replacement is started.
 *
 * <p>
 * With Atlas: no request fails, and each stopped instance served its last request at most
 * {@value #MAX_LAST_REQUEST_AFTER_DEREGISTER_MS} ms after it deregistered (measured by
 * the instance itself, {@link ServedRequests} against
 * {@link GracefulShutdown#deregisteredAt()}). The same scenario with
 * {@code atlas.enabled=false} on every application, one instance replaced, shows that it
 * does send attempts to a stopped instance (Spring Cloud's retries save the requests).
 *
 * <p>
 * Warmup stays on (the default, 60 s): a rolling restart in production runs with it, and
 * it only changes how much traffic a replacement gets, not whether a stopping instance is
 * avoided.
 */
class RollingRestartIT {

	static final int CONCURRENCY = 50;

	static final int USER_SERVICES = 3;

	/**
	 * Each client's pause between two requests, ms: at most 250 requests per second, so
	 * that a replacement starts while order-service is busy, not starved of the two cores
	 * (with no pause, a replacement took up to 20 s to start).
	 */
	static final long THINK_MILLIS = 200;

	static final long MAX_LAST_REQUEST_AFTER_DEREGISTER_MS = 1_000;

	/** Short drain: callers refresh on registry events within about a second. */
	static final String DRAIN = "2s";

	@Test
	void rollingRestartWithAtlasFailsNoRequest() throws Exception {
		Result result = rollingRestart(true, USER_SERVICES);
		result.print("[atlas]");

		assertThat(result.sent).as("requests sent").isGreaterThan(1_000);
		assertThat(result.failures).as("failed requests; first ones: %s", result.firstFailures()).isEmpty();
		assertThat(result.stopped).hasSize(USER_SERVICES).allSatisfy((stopped) -> {
			assertThat(stopped.deregisteredAt()).as("%s deregistered", stopped.instanceId()).isPositive();
			assertThat(stopped.served()).as("requests served by %s", stopped.instanceId()).isPositive();
			assertThat(stopped.lastServedAt() - stopped.deregisteredAt())
				.as("ms from deregistration of %s to the last request it served", stopped.instanceId())
				.isLessThanOrEqualTo(MAX_LAST_REQUEST_AFTER_DEREGISTER_MS);
		});
	}

	/**
	 * The contrast: the same scenario with {@code atlas.enabled=false}, one instance
	 * replaced. Spring Cloud's retries save the requests, but attempts go to the stopped
	 * instance (its list is cached), so the scenario does exercise what the test above
	 * asserts.
	 */
	@Test
	void withoutAtlasAttemptsGoToTheStoppedInstance() throws Exception {
		Result result = rollingRestart(false, 1);
		result.print("[atlas.enabled=false]");
		assertThat(result.sent).as("requests sent").isPositive();
		assertThat(result.failedAttempts).as("attempts that failed inside order-service").isPositive();
	}

	private static Result rollingRestart(boolean atlas, int restarts) throws Exception {
		List<ConfigurableApplicationContext> contexts = new ArrayList<>();
		EmbeddedRegistry registry = EmbeddedRegistry.start(0);
		try {
			List<String> common = new ArrayList<>(
					List.of("--server.port=0", "--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
							"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=" + DRAIN,
							// Spring Cloud's per-attempt meters (Atlas switches them on;
							// set for both runs)
							"--spring.cloud.loadbalancer.stats.micrometer.enabled=true"));
			if (!atlas) {
				common.add("--atlas.enabled=false");
			}
			String[] args = common.toArray(String[]::new);

			List<ConfigurableApplicationContext> users = new ArrayList<>();
			for (int i = 0; i < USER_SERVICES; i++) {
				users.add(UserServiceApplication.application().run(args));
			}
			contexts.addAll(users);
			ConfigurableApplicationContext orders = OrderServiceApplication.application().run(args);
			contexts.add(orders);
			DiscoveryClient discovery = orders.getBean(DiscoveryClient.class);
			awaitInstances(discovery, users);

			Result result = new Result();
			Loop loop = new Loop(port(orders), result);
			loop.start();
			Thread.sleep(2_000);

			for (int i = 0; i < restarts; i++) {
				ConfigurableApplicationContext old = users.get(i);
				ServedRequests served = old.getBean(ServedRequests.class);
				GracefulShutdown shutdown = old.getBeanProvider(GracefulShutdown.class).getIfAvailable();
				String instanceId = old.getEnvironment().getProperty("sample.instance-id") + ":" + port(old);
				result.phase = "stopping " + instanceId;
				long stopAt = System.currentTimeMillis();
				// what SIGTERM does: close the context (Atlas deregisters and drains
				// first)
				CompletableFuture<Void> closing = CompletableFuture.runAsync(old::close);
				ConfigurableApplicationContext replacement = UserServiceApplication.application().run(args);
				contexts.add(replacement);
				users.set(i, replacement);
				closing.get(60, TimeUnit.SECONDS);
				contexts.remove(old);
				awaitInstances(discovery, users);
				result.stopped.add(new Stopped(instanceId, stopAt, (shutdown != null) ? shutdown.deregisteredAt() : -1,
						served.served(), served.lastServedAt(), System.currentTimeMillis()));
			}
			result.phase = "after the restarts";
			Thread.sleep(2_000);
			loop.stop();
			// attempts that failed inside order-service and were retried on another
			// instance
			result.failedAttempts = orders.getBean(MeterRegistry.class)
				.find("loadbalancer.requests.failed")
				.timers()
				.stream()
				.mapToLong(Timer::count)
				.sum();
			return result;
		}
		finally {
			// the caller first, then the providers (in parallel: each drains), then the
			// registry
			// (closing it first would make every application wait for its deregistration
			// to time out)
			contexts.stream().filter((c) -> isOrderService(c)).forEach(ConfigurableApplicationContext::close);
			contexts.parallelStream().forEach(ConfigurableApplicationContext::close);
			registry.close();
		}
	}

	/** Waits until order-service sees exactly the given user-service instances. */
	private static void awaitInstances(DiscoveryClient discovery, List<ConfigurableApplicationContext> users) {
		List<Integer> ports = users.stream().map(RollingRestartIT::port).sorted().toList();
		await("order-service discovers user-service on " + ports).atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> discovery.getInstances(TrafficService.USER_SERVICE)
				.stream()
				.map((instance) -> instance.getPort())
				.sorted()
				.toList()
				.equals(ports));
	}

	private static boolean isOrderService(ConfigurableApplicationContext context) {
		return context.isActive()
				&& "order-service".equals(context.getEnvironment().getProperty("spring.application.name"));
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	/**
	 * A closed loop: {@value #CONCURRENCY} workers, each sending its next GET
	 * {@value #THINK_MILLIS} ms after the last returned.
	 */
	static final class Loop {

		private final int port;

		private final Result result;

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final ExecutorService workers = Executors.newFixedThreadPool(CONCURRENCY);

		private final HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();

		Loop(int port, Result result) {
			this.port = port;
			this.result = result;
		}

		void start() {
			for (int w = 0; w < CONCURRENCY; w++) {
				int worker = w;
				this.workers.execute(() -> {
					long n = 0;
					while (this.running.get()) {
						// alternate the two clients that retry 503 in Spring Cloud
						// 2025.1.4
						String client = ((worker + n) % 2 == 0) ? "rest-template" : "feign";
						call(client, worker * 1_000_000L + n++);
						try {
							Thread.sleep(THINK_MILLIS);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
							return;
						}
					}
				});
			}
		}

		private void call(String client, long id) {
			String phase = this.result.phase;
			HttpRequest request = HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/orders/" + id + "?client=" + client))
				.timeout(Duration.ofSeconds(15))
				.GET()
				.build();
			this.result.sentCounter.incrementAndGet();
			try {
				HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
				if (response.statusCode() != 200) {
					this.result.failures.add(new Failure(Instant.now(), phase, client,
							"HTTP " + response.statusCode() + " " + response.body()));
				}
			}
			catch (Exception ex) {
				this.result.failures.add(new Failure(Instant.now(), phase, client, ex.toString()));
			}
		}

		void stop() throws InterruptedException {
			this.running.set(false);
			this.workers.shutdown();
			assertThat(this.workers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
			this.result.sent = this.result.sentCounter.get();
		}

	}

	static final class Result {

		final AtomicLong sentCounter = new AtomicLong();

		final ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();

		final List<Stopped> stopped = new ArrayList<>();

		volatile String phase = "before the restarts";

		long sent;

		long failedAttempts;

		List<Failure> firstFailures() {
			return this.failures.stream().limit(10).toList();
		}

		void print(String label) {
			StringBuilder out = new StringBuilder();
			out.append(label)
				.append(" rolling restart of ")
				.append(this.stopped.size())
				.append(" of ")
				.append(USER_SERVICES)
				.append(" user-service instances under ")
				.append(CONCURRENCY)
				.append(" concurrent GETs: ")
				.append(this.sent)
				.append(" requests sent, ")
				.append(this.failures.size())
				.append(" failed (")
				.append(this.failedAttempts)
				.append(" attempts failed inside order-service and were retried elsewhere)\n");
			for (Stopped s : this.stopped) {
				out.append(label)
					.append("   ")
					.append(s.instanceId())
					.append(": served ")
					.append(s.served())
					.append(", stop at ")
					.append(Instant.ofEpochMilli(s.stopAt()));
				if (s.deregisteredAt() > 0) {
					out.append(", deregistered +")
						.append(s.deregisteredAt() - s.stopAt())
						.append(" ms, last request served ")
						.append(s.lastServedAt() - s.deregisteredAt())
						.append(" ms after deregistration");
				}
				else {
					out.append(", last request served +")
						.append(s.lastServedAt() - s.stopAt())
						.append(" ms after the stop");
				}
				out.append('\n');
			}
			this.failures.stream()
				.limit(10)
				.forEach((f) -> out.append(label).append("   failed: ").append(f).append('\n'));
			System.out.print(out);
		}

	}

	record Failure(Instant at, String phase, String client, String error) {
	}

	record Stopped(String instanceId, long stopAt, long deregisteredAt, long served, long lastServedAt,
			long replacedAt) {
	}

}
