package dev.atlas.sample.gateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.atlas.sample.registry.EmbeddedRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Zero downtime at the edge: a rolling restart of user-service behind the sample gateway.
 * Three user-services, each in a JVM of its own from its executable jar, and the gateway
 * in this JVM, on the in-process ZooKeeper. {@value #CONCURRENCY} clients send {@code GET
 * /api/users/{id}} through the gateway in a closed loop (each sends its next request
 * {@value #THINK_MILLIS} ms after the last one returned) for the whole run, while each
 * user-service in turn gets SIGTERM (Atlas deregisters it, it keeps serving for
 * {@value #DRAIN}, then Spring Boot stops it gracefully) and a replacement starts,
 * registers when ready and is discovered. No request may fail, and no attempt either.
 *
 * <p>
 * What makes that hold: the gateway evicts its cached list on the registry's change event
 * as soon as an instance deregisters ({@code RegistryEventRefresher}), well within the
 * drain, so no attempt goes to a stopping instance. The gateway's {@code Retry} filter
 * (gateway.yml), which retries a GET that met a refused or closed connection on another
 * instance ({@code GatewayRetryAvoidance}), is the safety net: with the providers'
 * graceful shutdown off it still saved every request in one run (63 attempts failed);
 * {@link GatewayRetryIT} covers it.
 *
 * <p>
 * For the contrast run (not part of the build), two system properties change the fleet:
 * {@code gateway-rolling-restart.provider-args} adds arguments to every user-service
 * (e.g. {@code --atlas.lifecycle.graceful-shutdown=false}) and
 * {@code gateway-rolling-restart.no-retry=true} gives the users route no {@code Retry}
 * filter.
 */
class GatewayRollingRestartIT {

	static final int CONCURRENCY = 50;

	/**
	 * Each client's pause between two requests, ms: at most 200 requests per second, so
	 * that the replacements start while the gateway is busy, not starved of the two cores
	 * (without it, a replacement took up to 80 s to start).
	 */
	static final long THINK_MILLIS = 250;

	static final int USER_SERVICES = 3;

	/** Short drain: the gateway follows registry events within about a second. */
	static final String DRAIN = "2s";

	/** Below this, the loop did not really run through the restarts. */
	static final long MIN_REQUESTS = 2_000;

	private static final Pattern PORT = Pattern.compile("\"port\"\\s*:\\s*(\\d+)");

	@Test
	void aRollingRestartBehindTheGatewayFailsNoRequest() throws Exception {
		List<String> providerExtra = Arrays
			.stream(System.getProperty("gateway-rolling-restart.provider-args", "").trim().split("\\s+"))
			.filter((arg) -> !arg.isEmpty())
			.toList();
		boolean noRetry = Boolean.getBoolean("gateway-rolling-restart.no-retry");
		Result result = new Result();
		long successfulAttempts = 0;
		long started = System.nanoTime();
		List<ForkedSample> running = new ArrayList<>();
		ConfigurableApplicationContext edge = null;
		EmbeddedRegistry registry = EmbeddedRegistry.start(0);
		try {
			List<String> common = new ArrayList<>(List.of("--management.server.port=0",
					"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
					"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=" + DRAIN));
			// an extra argument replaces the one of the same key (Spring Boot joins
			// repeated
			// command-line keys with commas)
			common.removeIf((arg) -> providerExtra.stream().anyMatch((extra) -> key(extra).equals(key(arg))));
			common.addAll(providerExtra);
			List<Integer> ports = new ArrayList<>();
			List<ForkedSample> users = new ArrayList<>();
			for (int i = 0; i < USER_SERVICES; i++) {
				int port = freePort();
				ports.add(port);
				users.add(startUserService(common, port));
			}
			running.addAll(users);
			List<String> gatewayArgs = new ArrayList<>(List.of("--server.port=0", "--management.server.port=0",
					"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
					"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s",
					// Spring Cloud's per-attempt meters: counts the attempts that failed
					"--spring.cloud.loadbalancer.stats.micrometer.enabled=true"));
			if (noRetry) {
				// the users route as in gateway.yml, without its Retry filter (a list
				// given here replaces the file's list as a whole)
				String route = "--spring.cloud.gateway.server.webflux.routes[0].";
				gatewayArgs.addAll(List.of(route + "id=users", route + "uri=lb://user-service",
						route + "predicates[0]=Path=/api/users/**", route + "filters[0]=StripPrefix=1"));
			}
			edge = GatewayApplication.application().run(gatewayArgs.toArray(String[]::new));
			List<String> usersFilters = edge.getBean(RouteLocator.class)
				.getRoutes()
				.filter((route) -> route.getId().equals("users"))
				.flatMapIterable(Route::getFilters)
				.map(Object::toString)
				.collectList()
				.block();
			System.out.println("[gateway rolling restart] users route filters: " + usersFilters);
			DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
			awaitInstances(discovery, ports, Duration.ofSeconds(120));
			result.startup = Duration.ofNanos(System.nanoTime() - started);

			Loop loop = new Loop(((WebServerApplicationContext) edge).getWebServer().getPort(), result);
			loop.start();
			awaitServed(result, ports, "before the restarts");

			for (int i = 0; i < USER_SERVICES; i++) {
				ForkedSample old = users.get(i);
				int oldPort = ports.get(i);
				result.phase = "replacing :" + oldPort;
				int newPort = freePort();
				ForkedSample replacement = startUserService(common, newPort);
				running.add(replacement);
				// SIGTERM while the replacement starts, as a rollout does
				CompletableFuture<Void> stopping = CompletableFuture.runAsync(() -> close(old));
				ports.set(i, newPort);
				users.set(i, replacement);
				stopping.get(60, TimeUnit.SECONDS);
				running.remove(old);
				awaitInstances(discovery, ports, Duration.ofSeconds(90));
				// the replacement gets traffic before the next instance stops
				awaitServed(result, List.of(newPort), "after replacing :" + oldPort);
			}
			result.phase = "after the restarts";
			awaitServed(result, ports, "after the restarts");
			loop.stop();
			result.elapsed = Duration.ofNanos(System.nanoTime() - started);
			MeterRegistry meters = edge.getBean(MeterRegistry.class);
			result.failedAttempts = meters.find("loadbalancer.requests.failed")
				.timers()
				.stream()
				.mapToLong(Timer::count)
				.sum();
			successfulAttempts = meters.find("loadbalancer.requests.success")
				.timers()
				.stream()
				.mapToLong(Timer::count)
				.sum();
		}
		finally {
			if (edge != null) {
				edge.close();
			}
			running.parallelStream().forEach(GatewayRollingRestartIT::close);
			// last: the applications deregister on the way out
			registry.close();
		}
		result.print(providerExtra, noRetry);

		assertThat(result.sent).as("requests sent through the gateway").isGreaterThan(MIN_REQUESTS);
		assertThat(result.failures).as("failed requests; first ones: %s", result.firstFailures()).isEmpty();
		// The lossless offline alone, not the Retry filter, keeps every attempt off the
		// stopping instances: the gateway stops choosing one within the drain. (With the
		// providers' graceful shutdown off, the Retry filter still saves every request,
		// 63
		// attempts failing in one run; GatewayRetryIT covers that layer.)
		// the gateway records its attempts: these meters count (so that 0 failed says
		// something)
		assertThat(successfulAttempts).as("attempts that succeeded inside the gateway")
			.isGreaterThanOrEqualTo(result.sent - result.failures.size());
		assertThat(result.failedAttempts).as("attempts that failed inside the gateway").isZero();
	}

	private static String key(String arg) {
		int equals = arg.indexOf('=');
		return (equals < 0) ? arg : arg.substring(0, equals);
	}

	private static ForkedSample startUserService(List<String> common, int port) throws IOException {
		List<String> args = new ArrayList<>(common);
		args.add("--server.port=" + port);
		return ForkedSample.start("sample.user-service.jar", "rolling-user-service-" + port, args);
	}

	private static void close(ForkedSample sample) {
		try {
			sample.close();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	/** Waits until the gateway discovers exactly the user-services on these ports. */
	private static void awaitInstances(DiscoveryClient discovery, List<Integer> ports, Duration atMost) {
		List<Integer> expected = ports.stream().sorted().toList();
		await("the gateway discovers user-service on " + expected).atMost(atMost)
			.pollInterval(Duration.ofMillis(100))
			.until(() -> discovery.getInstances("user-service")
				.stream()
				.map(ServiceInstance::getPort)
				.sorted()
				.toList()
				.equals(expected));
	}

	/**
	 * Waits until each of these instances answered 50 more requests through the gateway.
	 */
	private static void awaitServed(Result result, List<Integer> ports, String when) {
		Map<Integer, Long> before = new ConcurrentHashMap<>();
		ports.forEach((port) -> before.put(port, result.served(port)));
		await("50 more requests served by each of " + ports + " " + when).atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> ports.stream().allMatch((port) -> result.served(port) >= before.get(port) + 50));
	}

	/**
	 * A closed loop: {@value #CONCURRENCY} workers, each sending its next GET when the
	 * last returns.
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
				long worker = w;
				this.workers.execute(() -> {
					long n = 0;
					while (this.running.get()) {
						call(worker * 1_000_000L + n++);
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

		private void call(long id) {
			String phase = this.result.phase;
			HttpRequest request = HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/users/" + id))
				.timeout(Duration.ofSeconds(15))
				.GET()
				.build();
			this.result.sentCounter.incrementAndGet();
			try {
				HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
				Matcher port = PORT.matcher(response.body());
				if (response.statusCode() != 200 || !port.find()) {
					this.result.failures.add(
							new Failure(Instant.now(), phase, "HTTP " + response.statusCode() + " " + response.body()));
				}
				else {
					this.result.servedBy.computeIfAbsent(Integer.parseInt(port.group(1)), (p) -> new LongAdder())
						.increment();
				}
			}
			catch (Exception ex) {
				this.result.failures.add(new Failure(Instant.now(), phase, ex.toString()));
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

		final Map<Integer, LongAdder> servedBy = new ConcurrentHashMap<>();

		volatile String phase = "before the restarts";

		long sent;

		long failedAttempts;

		Duration startup = Duration.ZERO;

		Duration elapsed = Duration.ZERO;

		long served(int port) {
			LongAdder served = this.servedBy.get(port);
			return (served != null) ? served.sum() : 0;
		}

		List<Failure> firstFailures() {
			return this.failures.stream().limit(10).toList();
		}

		void print(List<String> providerExtra, boolean noRetry) {
			String label = "[gateway rolling restart" + (providerExtra.isEmpty() ? "" : ", providers " + providerExtra)
					+ (noRetry ? ", no Retry filter" : "") + "]";
			StringBuilder out = new StringBuilder();
			out.append(label)
				.append(' ')
				.append(USER_SERVICES)
				.append(" user-services replaced under ")
				.append(CONCURRENCY)
				.append(" concurrent GETs through the gateway: ")
				.append(this.sent)
				.append(" requests sent, ")
				.append(this.failures.size())
				.append(" failed; ")
				.append(this.failedAttempts)
				.append(" attempts failed inside the gateway; served by port ")
				.append(new TreeMap<>(this.servedBy))
				.append("; fleet up in ")
				.append(this.startup.toSeconds())
				.append(" s, ")
				.append(this.elapsed.toSeconds())
				.append(" s in all\n");
			this.failures.stream()
				.limit(10)
				.forEach((f) -> out.append(label).append("   failed: ").append(f).append('\n'));
			System.out.print(out);
		}

	}

	record Failure(Instant at, String phase, String error) {
	}

}
