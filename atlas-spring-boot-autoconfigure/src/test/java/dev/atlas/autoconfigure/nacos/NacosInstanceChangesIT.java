package dev.atlas.autoconfigure.nacos;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.atlas.autoconfigure.nacos.NacosApps.awaitInstances;
import static dev.atlas.autoconfigure.nacos.NacosApps.calls;
import static dev.atlas.autoconfigure.nacos.NacosApps.port;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An operator changes an instance through the real Nacos server's admin API (weight,
 * version tag, {@code enabled}), and a caller's traffic follows within 1 s of the API
 * call: Nacos pushes the change to the caller's Nacos client, and Atlas evicts that
 * service's cached instance list at once ({@link NacosInstanceChangeSource}), instead of
 * after the load balancer cache's TTL (35 s).
 *
 * <p>
 * Runs only with {@value NacosApps#ADDRESS_VARIABLE} set (and admin credentials, see
 * {@link NacosApps}). Every delay is printed, as {@code nacos-it: ...}.
 */
@EnabledIfEnvironmentVariable(named = NacosApps.ADDRESS_VARIABLE, matches = ".+", disabledReason = NacosApps.SKIPPED)
class NacosInstanceChangesIT {

	/** How long a change through the API may take to reach the caller's traffic. */
	private static final Duration WITHIN = Duration.ofSeconds(1);

	private static final HttpClient http = HttpClient.newHttpClient();

	private NacosApps nacos;

	@BeforeEach
	void nacos() {
		this.nacos = new NacosApps();
	}

	@AfterEach
	void stop() {
		this.nacos.close();
	}

	/**
	 * A caller of {@code service}: warmup off, so that only the registry's weights count.
	 */
	private ConfigurableApplicationContext caller(String service, String... properties) {
		String[] all = new String[properties.length + 2];
		all[0] = "app.target=" + service;
		all[1] = "atlas.warmup.enabled=false";
		System.arraycopy(properties, 0, all, 2, properties.length);
		return this.nacos.start(NacosApps.service("caller"), all);
	}

	@Test
	void weightsSetThroughTheApiReachTheCallersTrafficWithinOneSecond() {
		String service = NacosApps.service("weights");
		int a = port(this.nacos.start(service));
		int b = port(this.nacos.start(service));
		ConfigurableApplicationContext random = caller(service, "atlas.loadbalancer.strategy=weighted-random");
		ConfigurableApplicationContext smooth = caller(service, "atlas.loadbalancer.strategy=smooth-round-robin");
		awaitInstances(random, service, 2);
		awaitInstances(smooth, service, 2);
		assertThat(calls(random, 100).keySet()).containsExactlyInAnyOrder(a, b);
		assertThat(calls(smooth, 4)).isEqualTo(Map.of(a, 2, b, 2));

		// a drained (weight 0): no caller reaches it within 1 s. Two smooth-round-robin
		// calls reach both while both have weight 1; 20 weighted-random calls miss a
		// with probability 2^-20.
		timed("weight 0 on one of two", () -> this.nacos.updateInstance(service, a, 0, true, Map.of()),
				lists(a).negate(), () -> !calls(smooth, 2).containsKey(a) && !calls(random, 20).containsKey(a), random,
				smooth);
		assertThat(calls(random, 200)).containsOnlyKeys(b);
		assertThat(calls(smooth, 200)).containsOnlyKeys(b);

		// 1:3. Every 8 smooth-round-robin calls reach a exactly twice with these weights
		// (4 times at 1:1, never at 0:1).
		timed("weights 0:1 -> 1:3", () -> {
			this.nacos.updateInstance(service, a, 1, true, Map.of());
			this.nacos.updateInstance(service, b, 3, true, Map.of());
		}, has(a, "nacos.weight", "1.0").and(has(b, "nacos.weight", "3.0")),
				() -> calls(smooth, 8).equals(Map.of(a, 2, b, 6)), random, smooth);
		// Smooth round robin: exactly 1 in 4, give or take one per restart of its
		// sequence (a new instance list, e.g. on Spring Cloud Alibaba's 30 s heartbeat).
		Map<Integer, Integer> exact = calls(smooth, 2_000);
		// Weighted random: binomial, 1,000 calls at p = 0.25, sigma 13.7 calls; 4 sigma
		// is 55 calls (1:1 would be 500).
		Map<Integer, Integer> drawn = calls(random, 1_000);
		System.out.printf("nacos-it: weights 1:3: smooth-round-robin %d of 2,000 calls, weighted-random %d of 1,000%n",
				exact.get(a), drawn.get(a));
		assertThat(exact.get(a)).isBetween(498, 502);
		assertThat(drawn.get(a)).isBetween(195, 305);
	}

	@Test
	void aVersionTagSetThroughTheApiTakesTaggedCallsAndOnlyThemWithinOneSecond() {
		String service = NacosApps.service("tags");
		int a = port(this.nacos.start(service));
		int b = port(this.nacos.start(service));
		ConfigurableApplicationContext caller = caller(service);
		awaitInstances(caller, service, 2);
		// No instance has v2: tagged calls fall back to the baseline, both instances.
		assertThat(viaCaller(caller, 100, "v2").keySet()).containsExactlyInAnyOrder(a, b);

		// 20 calls of each kind: by chance all on one instance with probability 2^-20.
		timed("version=v2 on one of two", () -> this.nacos.updateInstance(service, a, 1, true, Map.of("version", "v2")),
				has(a, "version", "v2"), () -> viaCaller(caller, 20, "v2").keySet().equals(Set.of(a))
						&& viaCaller(caller, 20, null).keySet().equals(Set.of(b)),
				caller);
		assertThat(viaCaller(caller, 200, "v2")).containsOnlyKeys(a);
		// Untagged calls, coming in (propagation) or made by the caller itself, avoid
		// the tagged instance (atlas.gray.isolate-baseline=true).
		assertThat(viaCaller(caller, 200, null)).containsOnlyKeys(b);
		assertThat(calls(caller, 200)).containsOnlyKeys(b);

		// The next update without the tag removes it: a is baseline again.
		timed("version tag removed", () -> this.nacos.updateInstance(service, a, 1, true, Map.of()),
				has(a, "version", null), () -> viaCaller(caller, 20, null).containsKey(a), caller);
		assertThat(viaCaller(caller, 100, "v2").keySet()).containsExactlyInAnyOrder(a, b);
	}

	@Test
	void anInstanceDisabledThroughTheApiIsLeftWithinOneSecondAndChosenAgainWhenEnabled() {
		String service = NacosApps.service("enabled");
		int a = port(this.nacos.start(service));
		int b = port(this.nacos.start(service));
		ConfigurableApplicationContext caller = caller(service);
		awaitInstances(caller, service, 2);
		assertThat(calls(caller, 100).keySet()).containsExactlyInAnyOrder(a, b);

		timed("enabled=false on one of two", () -> this.nacos.updateInstance(service, a, 1, false, Map.of()),
				lists(a).negate(), () -> !calls(caller, 20).containsKey(a), caller);
		assertThat(calls(caller, 200)).containsOnlyKeys(b);
		// The server still has it, disabled: its open client API leaves it out.
		assertThat(this.nacos.listedPorts(service)).containsExactly(b);

		timed("enabled=true again", () -> this.nacos.updateInstance(service, a, 1, true, Map.of()), lists(a),
				() -> calls(caller, 20).containsKey(a), caller);
		assertThat(calls(caller, 200).keySet()).containsExactlyInAnyOrder(a, b);
	}

	/**
	 * Runs a change through the API, then waits up to {@link #WITHIN} from when the API
	 * answered until the callers' view shows it: first their discovery clients (the Nacos
	 * client's pushed list; no call is made before), then their traffic. Prints the
	 * times.
	 * @param what the change, for the output
	 * @param change calls the API
	 * @param discovered whether an instance list, as the callers' discovery clients
	 * return it, shows the change
	 * @param traffic whether the callers' traffic shows the change; makes calls
	 * @param callers the callers whose discovery clients are checked
	 */
	private static void timed(String what, Runnable change, Predicate<List<ServiceInstance>> discovered,
			Callable<Boolean> traffic, ConfigurableApplicationContext... callers) {
		String service = callers[0].getEnvironment().getRequiredProperty("app.target");
		long start = System.nanoTime();
		change.run();
		long answered = System.nanoTime();
		AtomicLong seenByDiscovery = new AtomicLong();
		await(what).atMost(WITHIN).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).until(() -> {
			if (seenByDiscovery.get() == 0) {
				for (ConfigurableApplicationContext caller : callers) {
					if (!discovered.test(caller.getBean(DiscoveryClient.class).getInstances(service))) {
						return false;
					}
				}
				seenByDiscovery.set(System.nanoTime());
			}
			return traffic.call();
		});
		long seen = System.nanoTime();
		System.out.printf(
				"nacos-it: %s: API call %d ms; then callers' discovery clients changed after %d ms, their traffic "
						+ "within %d ms%n",
				what, (answered - start) / 1_000_000, (seenByDiscovery.get() - answered) / 1_000_000,
				(seen - answered) / 1_000_000);
	}

	/**
	 * Whether the instance on a port is in a list, with a metadata entry, or without it
	 * when {@code value} is {@code null}.
	 */
	private static Predicate<List<ServiceInstance>> has(int port, String key, @Nullable String value) {
		return (instances) -> instances.stream()
			.anyMatch(
					(instance) -> instance.getPort() == port && Objects.equals(instance.getMetadata().get(key), value));
	}

	private static Predicate<List<ServiceInstance>> lists(int port) {
		return (instances) -> instances.stream().anyMatch((instance) -> instance.getPort() == port);
	}

	/**
	 * Calls the caller's {@code /call} over HTTP, optionally with the gray header, which
	 * the caller propagates to its own call.
	 * @return how many calls each provider port served
	 */
	private static Map<Integer, Integer> viaCaller(ConfigurableApplicationContext caller, int times,
			@Nullable String tag) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(caller) + "/call"))
			.timeout(Duration.ofSeconds(5));
		if (tag != null) {
			request.header("X-Service-Version", tag);
		}
		HttpRequest built = request.build();
		Map<Integer, Integer> byPort = new HashMap<>();
		for (int i = 0; i < times; i++) {
			try {
				HttpResponse<String> response = http.send(built, HttpResponse.BodyHandlers.ofString());
				assertThat(response.statusCode()).as("caller's answer: %s", response.body()).isEqualTo(200);
				byPort.merge(Integer.parseInt(response.body()), 1, Integer::sum);
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
		return byPort;
	}

}
