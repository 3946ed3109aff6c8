package dev.atlas.autoconfigure.nacos;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.alibaba.cloud.nacos.NacosServiceManager;
import com.alibaba.nacos.api.exception.NacosException;
import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.lifecycle.GracefulShutdown;
import dev.atlas.autoconfigure.lifecycle.RegistrationStatus;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.atlas.autoconfigure.nacos.NacosApps.awaitInstances;
import static dev.atlas.autoconfigure.nacos.NacosApps.calls;
import static dev.atlas.autoconfigure.nacos.NacosApps.port;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The registry goes away and comes back, with a real Nacos server that other tests share:
 * so the server keeps running, and a {@link TcpForwarder} between the applications and
 * the server plays the outage (connections refused and cut) and the return. Prints the
 * delays, as {@code nacos-it: ...}.
 *
 * <p>
 * Runs only with {@value NacosApps#ADDRESS_VARIABLE} set; needs no admin credentials.
 */
@EnabledIfEnvironmentVariable(named = NacosApps.ADDRESS_VARIABLE, matches = ".+", disabledReason = NacosApps.SKIPPED)
class NacosOutageIT {

	private NacosApps nacos;

	@BeforeEach
	void nacos() {
		this.nacos = new NacosApps();
	}

	@AfterEach
	void stop() {
		this.nacos.close();
	}

	@Test
	void callersKeepCallingThroughARegistryOutageAndTheProviderIsListedAgainAfterIt() throws Exception {
		TcpForwarder registry = this.nacos.forwarder(true);
		String service = NacosApps.service("outage");
		ConfigurableApplicationContext provider = this.nacos.start(registry, service);
		ConfigurableApplicationContext caller = this.nacos.start(registry, NacosApps.service("caller"),
				"app.target=" + service, "atlas.warmup.enabled=false");
		int port = port(provider);
		awaitInstances(caller, service, 1);
		assertThat(calls(caller, 20)).containsOnlyKeys(port);
		assertThat(this.nacos.listedPorts(service)).containsExactly(port);
		String registeredAt = discovered(caller, service).get(0).getMetadata().get("atlas.registered-at");
		assertThat(registeredAt).isNotNull();

		Traffic traffic = new Traffic(caller);
		try {
			traffic.awaitCalls(20);
			long down = System.nanoTime();
			registry.down();
			// The server sees its clients' connections close and drops their ephemeral
			// instances; the Nacos clients see theirs cut.
			Map<String, Long> cut = milestones(down,
					Map.of("server no longer lists the provider", () -> this.nacos.listedPorts(service).isEmpty(),
							"provider's Nacos client DOWN", () -> "DOWN".equals(serverStatus(provider)),
							"caller's Nacos client DOWN", () -> "DOWN".equals(serverStatus(caller))));
			System.out.printf("nacos-it: outage, after the cut: %s%n", cut);
			// 3 s into the outage, with calls made all along: none failed.
			await("3 s of outage").atMost(Duration.ofSeconds(10))
				.until(() -> System.nanoTime() - down > 3_000_000_000L && traffic.calls() > 100);
			assertThat(traffic.failures())
				.as("%d calls failed during the outage, first: %s", traffic.failures(), traffic.firstFailure())
				.isZero();
			assertThat(discovered(caller, service)).extracting(ServiceInstance::getPort).containsExactly(port);

			long up = System.nanoTime();
			registry.up();
			// The Nacos clients reconnect; the provider's registers the instance again by
			// itself, the caller's subscribes again.
			Map<String, Long> back = milestones(up,
					Map.of("server lists the provider again",
							() -> this.nacos.listedPorts(service).equals(List.of(port)), "provider's Nacos client UP",
							() -> "UP".equals(serverStatus(provider)), "caller's Nacos client UP",
							() -> "UP".equals(serverStatus(caller))));
			System.out.printf("nacos-it: outage, after the forwarder accepted again: %s%n", back);
			traffic.awaitCalls(traffic.calls() + 50);
			assertThat(traffic.failures()).as("%d calls failed, first: %s", traffic.failures(), traffic.firstFailure())
				.isZero();
			assertThat(traffic.ports()).containsOnly(port);
			// The caller's registry view is live again: an instance started now is
			// called.
			int second = port(this.nacos.start(registry, service));
			long started = System.nanoTime();
			await("the caller calls a new instance").atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> traffic.ports().contains(second));
			System.out.printf(
					"nacos-it: outage over: a new instance is called %d ms after it started; %d calls, "
							+ "%d failed; atlas.registry.stale=%.0f%n",
					ms(System.nanoTime() - started), traffic.calls(), traffic.failures(), staleCount(caller, service));
		}
		finally {
			traffic.close();
		}
		assertThat(traffic.failures()).as("%d calls failed, first: %s", traffic.failures(), traffic.firstFailure())
			.isZero();
		// The Nacos client registered the same instance again: same registration time,
		// so callers do not warm it up again.
		assertThat(discovered(caller, service)).filteredOn((instance) -> instance.getPort() == port)
			.singleElement()
			.extracting(ServiceInstance::getMetadata)
			.satisfies((metadata) -> assertThat(metadata).containsEntry("atlas.registered-at", registeredAt));
	}

	/**
	 * Waits (up to 30 s) until every condition has held once, polling each every 20 ms
	 * until it does.
	 * @param since when the clock starts, {@link System#nanoTime()}
	 * @param conditions what to wait for, by name
	 * @return the milliseconds after {@code since} at which each first held, by name, in
	 * that order
	 */
	private static Map<String, Long> milestones(long since, Map<String, Callable<Boolean>> conditions) {
		Map<String, Long> seen = Collections.synchronizedMap(new LinkedHashMap<>());
		await(String.join(", ", conditions.keySet())).atMost(Duration.ofSeconds(30))
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(20))
			.until(() -> {
				for (Map.Entry<String, Callable<Boolean>> condition : conditions.entrySet()) {
					if (!seen.containsKey(condition.getKey()) && condition.getValue().call()) {
						seen.put(condition.getKey(), ms(System.nanoTime() - since));
					}
				}
				return seen.size() == conditions.size();
			});
		return seen;
	}

	/**
	 * With {@code fail-fast=true} (Spring Cloud Alibaba's default) an application that
	 * cannot register does not start: with Atlas (which registers once the application is
	 * ready) as without it (which registers when the web server is up).
	 * @param atlas {@code atlas.enabled}
	 */
	@ParameterizedTest(name = "atlas.enabled={0}")
	@ValueSource(booleans = { true, false })
	void withFailFastAnApplicationDoesNotStartWhileTheRegistryIsDown(boolean atlas) throws Exception {
		TcpForwarder registry = this.nacos.forwarder(false);
		String service = NacosApps.service("fail-fast");
		long start = System.nanoTime();
		// spring.cloud.nacos.discovery.fail-fast is true by default
		Throwable failure = catchThrowable(() -> this.nacos.start(registry, service, "atlas.enabled=" + atlas));
		System.out.printf(
				"nacos-it: fail-fast=true, atlas.enabled=%s, start against a refusing registry: %s after %d ms%n",
				atlas, (failure != null) ? "failed (" + failure + ")" : "started", ms(System.nanoTime() - start));
		assertThat(failure)
			.as("SpringApplication.run of an application that cannot register, with "
					+ "spring.cloud.nacos.discovery.fail-fast=true (the default), must throw")
			.isNotNull();
	}

	/**
	 * With {@code fail-fast=false} the application starts while the registry is down, and
	 * the Nacos client registers it by itself once the server is back: Atlas reports it
	 * {@code PENDING} until the registry lists it, then {@code LISTED}, and when it
	 * closes it deregisters and drains like any registered instance: callers using each
	 * of the four clients lose no request.
	 */
	@Test
	void withoutFailFastAnApplicationStartsWhileTheRegistryIsDownRegistersWhenItIsBackAndStopsLosslessly()
			throws Exception {
		TcpForwarder registry = this.nacos.forwarder(false);
		String service = NacosApps.service("no-fail-fast");
		long start = System.nanoTime();
		ConfigurableApplicationContext app = this.nacos.start(registry, service,
				"spring.cloud.nacos.discovery.fail-fast=false", "atlas.lifecycle.drain=3s");
		long started = System.nanoTime();
		assertThat(this.nacos.listedPorts(service)).isEmpty();
		assertThat(app.getBean(RegistrationStatus.class).phase()).isEqualTo(RegistrationStatus.Phase.PENDING);
		long up = System.nanoTime();
		registry.up();
		await("server lists the application").atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.nacos.listedPorts(service).equals(List.of(port(app))));
		long listed = System.nanoTime();
		await("Atlas knows the application is listed").atMost(Duration.ofSeconds(3))
			.until(() -> app.getBean(RegistrationStatus.class).phase() == RegistrationStatus.Phase.LISTED);
		long known = System.nanoTime();
		System.out.printf("nacos-it: fail-fast=false: started against a refusing registry in %d ms; registered "
				+ "by the Nacos client %d ms after the forwarder accepted again; known to Atlas %d ms "
				+ "after that%n", ms(started - start), ms(listed - up), ms(known - listed));

		ConfigurableApplicationContext other = this.nacos.start(service);
		ConfigurableApplicationContext caller = this.nacos.start(NacosApps.service("caller"), "app.target=" + service);
		NacosApps.awaitInstances(caller, service, 2);
		List<String> clients = List.of("rest-template", "rest-client", "web-client", "feign");
		AtomicBoolean running = new AtomicBoolean(true);
		Map<String, AtomicInteger> sent = new ConcurrentHashMap<>();
		Map<String, List<String>> failed = new ConcurrentHashMap<>();
		Set<String> answers = ConcurrentHashMap.newKeySet();
		WhoApp who = caller.getBean(WhoApp.class);
		// one thread per client: the common pool may have fewer threads than loops
		ExecutorService threads = Executors.newFixedThreadPool(clients.size());
		MeterRegistry meters = app.getBean(MeterRegistry.class);
		try {
			List<CompletableFuture<Void>> load = clients.stream().map((client) -> CompletableFuture.runAsync(() -> {
				while (running.get()) {
					sent.computeIfAbsent(client, (key) -> new AtomicInteger()).incrementAndGet();
					try {
						answers.add(who.call(client));
					}
					catch (RuntimeException ex) {
						failed.computeIfAbsent(client, (key) -> new CopyOnWriteArrayList<>()).add(ex.toString());
					}
				}
			}, threads)).toList();
			await().atMost(Duration.ofSeconds(5))
				.until(() -> answers.contains(Integer.toString(port(app)))
						&& answers.contains(Integer.toString(port(other))));
			app.close();
			// calls go on after the stopped instance is gone
			int sentAtStop = sent.values().stream().mapToInt(AtomicInteger::get).sum();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> sent.values().stream().mapToInt(AtomicInteger::get).sum() >= sentAtStop + 200);
			running.set(false);
			CompletableFuture.allOf(load.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
		}
		finally {
			running.set(false);
			threads.shutdown();
		}
		System.out.printf("nacos-it: fail-fast=false, closed after the late registration: sent %s, failed %s%n", sent,
				failed.keySet());
		assertThat(this.nacos.listedPorts(service)).containsExactly(port(other));
		assertThat(meters.timer(GracefulShutdown.DRAIN_METER).count()).as("drained").isEqualTo(1);
		assertThat(sent.keySet()).containsExactlyInAnyOrderElementsOf(clients);
		assertThat(failed).as("failed calls per client").isEmpty();
	}

	private static List<ServiceInstance> discovered(ConfigurableApplicationContext app, String service) {
		return app.getBean(DiscoveryClient.class).getInstances(service);
	}

	private static String serverStatus(ConfigurableApplicationContext app) throws NacosException {
		return app.getBean(NacosServiceManager.class).getNamingService().getServerStatus();
	}

	private static double staleCount(ConfigurableApplicationContext app, String service) {
		Counter counter = app.getBean(MeterRegistry.class)
			.find(LastKnownGood.STALE_METER)
			.tag("service", service)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static long ms(long nanos) {
		return nanos / 1_000_000;
	}

	/**
	 * Calls from an application on a thread of its own, one call every 5 ms, until
	 * closed; counts calls, failures and the ports that answered. Thread-safe.
	 */
	private static final class Traffic {

		private final AtomicInteger calls = new AtomicInteger();

		private final AtomicInteger failures = new AtomicInteger();

		private final AtomicReference<@Nullable String> firstFailure = new AtomicReference<>();

		private final Set<Integer> ports = ConcurrentHashMap.newKeySet();

		private final Thread thread;

		private volatile boolean running = true;

		Traffic(ConfigurableApplicationContext caller) {
			WhoApp client = caller.getBean(WhoApp.class);
			this.thread = new Thread(() -> {
				while (this.running) {
					try {
						this.ports.add(Integer.parseInt(client.call()));
					}
					catch (RuntimeException ex) {
						this.failures.incrementAndGet();
						this.firstFailure.compareAndSet(null, ex.toString());
					}
					this.calls.incrementAndGet();
					try {
						Thread.sleep(5); // pacing, not timing
					}
					catch (InterruptedException ex) {
						return;
					}
				}
			}, "traffic");
			this.thread.start();
		}

		void awaitCalls(int count) {
			await().atMost(Duration.ofSeconds(10)).until(() -> this.calls.get() >= count);
		}

		int calls() {
			return this.calls.get();
		}

		int failures() {
			return this.failures.get();
		}

		@Nullable String firstFailure() {
			return this.firstFailure.get();
		}

		Set<Integer> ports() {
			return this.ports;
		}

		void close() throws InterruptedException {
			this.running = false;
			this.thread.join(5_000);
		}

	}

}
