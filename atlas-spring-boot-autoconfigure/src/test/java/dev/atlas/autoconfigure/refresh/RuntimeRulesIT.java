package dev.atlas.autoconfigure.refresh;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpClient.Version;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.runtime.RuntimeRules;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.data.Offset;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Routing rules changed at runtime, end to end, with real applications on a real
 * (in-process) ZooKeeper: two baseline providers of {@value #SERVICE} (they answer
 * {@code v1-a} and {@code v1-b}) and one tagged {@code v2} (it answers {@code v2}); a
 * caller that imports a rules file ({@code spring.config.import=optional:file:…}) and
 * exposes {@code /actuator/refresh} on its management port, as an operator would change
 * rules without a config server (a Nacos config push ends in the same Spring Cloud
 * refresh).
 *
 * <p>
 * The canary percentage of {@code v2} goes 10 → 50 → 100 → 0 % while a thread keeps
 * calling through the caller's {@code @LoadBalanced RestClient}. After each POST to
 * {@code /actuator/refresh} (Atlas puts the new rules in force before it returns, so the
 * measurement starts at once: well within the 1 s allowed), the share of {@code v2} is
 * measured twice, each within {@value #TOLERANCE_POINTS} points of the target:
 * <ul>
 * <li>over the next {@value #KEYED_CALLS} calls of {@value #KEYED_CALLS} distinct users
 * ({@code X-User-Id}, the hash key of the percentage choice): the choice per user is
 * fixed, so the share of this set of users is too (a false failure is impossible, and a
 * wrong percentage fails every time);</li>
 * <li>over the next {@value #RANDOM_CALLS} calls without a key, drawn at random per call:
 * 3 points are 3.8 standard deviations of that share at 50 % (a false failure about once
 * in 7,000 runs), more at the other targets.</li>
 * </ul>
 * No call fails, measured or background. Then an invalid percentage (150) is rejected:
 * the share stays at the previous target (measured), one ERROR names the property, the
 * value and the allowed values, {@code atlas.config.rejected} counts it; a later valid
 * change applies. Last, the strategy of the service changes at runtime from
 * {@code weighted-random} to {@code smooth-round-robin}, and the sequence of sequential
 * calls becomes the strict alternation of the two baseline providers.
 *
 * <p>
 * Seen failing: with the same test on the commit before this change (rules read once per
 * load-balancer context), the 10 % step measured 0 % of {@code v2}.
 */
@ExtendWith(OutputCaptureExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RuntimeRulesIT {

	@TempDir
	static Path directory;

	private static final String SERVICE = "canary";

	private static final String WEIGHT = "atlas.services." + SERVICE + ".gray.weights.v2";

	private static final int KEYED_CALLS = 1000;

	private static final int RANDOM_CALLS = 4000;

	private static final double TOLERANCE_POINTS = 3.0;

	private static final int MEASURING_THREADS = 4;

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	private static RestClient client;

	private static RestClient management;

	private static Path rules;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		apps.start(WhoApp.class, SERVICE, "app.answer=v1-a");
		apps.start(WhoApp.class, SERVICE, "app.answer=v1-b");
		apps.start(WhoApp.class, SERVICE, "app.answer=v2", "spring.cloud.zookeeper.discovery.metadata.version=v2");
		rules = directory.resolve("atlas-rules.properties");
		write(Map.of());
		caller = apps.start(WhoApp.class, "caller", "app.target=" + SERVICE, "atlas.warmup.enabled=false",
				"atlas.gray.hash-key-header=X-User-Id", "spring.config.import=optional:file:" + rules.toAbsolutePath(),
				"management.server.port=0", "management.endpoints.web.exposure.include=refresh,atlas");
		ZooKeeperApps.awaitInstances(caller, SERVICE, 3);
		client = caller.getBean("loadBalancedRestClientBuilder", RestClient.Builder.class)
			.clone()
			.requestFactory(new JdkClientHttpRequestFactory(HttpClient.newBuilder().version(Version.HTTP_1_1).build()))
			.build();
		management = RestClient.create("http://127.0.0.1:"
				+ caller.getEnvironment().getRequiredProperty("local.management.port", Integer.class));
	}

	@AfterAll
	static void stop() throws Exception {
		if (apps != null) {
			apps.close();
		}
	}

	@Test
	@Order(1)
	void canaryPercentageFollowsEachRefreshUnderTrafficWithoutAFailedCall() throws Exception {
		assertThat(share(KEYED_CALLS, true)).as("v2 share before any change").isZero();
		try (Background traffic = new Background(1)) {
			for (double target : new double[] { 10, 50, 100, 0 }) {
				long started = System.nanoTime();
				long before = System.currentTimeMillis();
				List<String> changed = refresh(Map.of(WEIGHT, format(target)));
				long after = System.currentTimeMillis();
				long refreshMillis = (System.nanoTime() - started) / 1_000_000;
				assertThat(changed).as("keys the refresh changed").contains(WEIGHT);
				assertThat(rulesChangedAt()).as("the new rules were in force when the refresh returned")
					.isBetween(before, after);
				double keyed = share(KEYED_CALLS, true);
				double random = share(RANDOM_CALLS, false);
				System.out.printf(Locale.ROOT,
						"RuntimeRulesIT: v2 target %.0f %% (refresh took %d ms): %.1f %% of the next %d keyed calls, "
								+ "%.1f %% of the next %d random calls%n",
						target, refreshMillis, keyed, KEYED_CALLS, random, RANDOM_CALLS);
				assertThat(keyed).as("v2 share of %d keyed calls after the change to %.0f %%", KEYED_CALLS, target)
					.isCloseTo(target, Offset.offset(TOLERANCE_POINTS));
				assertThat(random).as("v2 share of %d random calls after the change to %.0f %%", RANDOM_CALLS, target)
					.isCloseTo(target, Offset.offset(TOLERANCE_POINTS));
			}
			traffic.assertNoFailure();
		}
	}

	@Test
	@Order(2)
	@SuppressWarnings("unchecked")
	void anInvalidChangeKeepsThePreviousShareAndALaterValidOneApplies(CapturedOutput output) throws Exception {
		refresh(Map.of(WEIGHT, "50"));
		double rejectedBefore = rejected();
		refresh(Map.of(WEIGHT, "150"));
		assertThat(share(KEYED_CALLS, true)).as("v2 share after the rejected change")
			.isCloseTo(50, Offset.offset(TOLERANCE_POINTS));
		assertThat(rejected()).as("atlas.config.rejected{service=%s}", SERVICE).isEqualTo(rejectedBefore + 1);
		assertThat(output.getOut()).contains("Atlas rejected the configuration change for service '" + SERVICE + "'")
			.contains("atlas.services." + SERVICE + ".gray.weights")
			.contains("150")
			.contains("0..100");
		Map<String, Object> view = management.get()
			.uri("/actuator/atlas/" + SERVICE)
			.retrieve()
			.body(new ParameterizedTypeReference<Map<String, Object>>() {
			});
		Map<String, Object> gray = (Map<String, Object>) ((Map<String, Object>) view.get("rules")).get("gray");
		assertThat(gray.get("canary-percentages")).as("rules in force").isEqualTo(Map.of("v2", 50.0));
		assertThat(view.get("rulesChangedAt")).as("when they last changed").isNotNull();

		// A value that cannot even be converted: Spring Cloud's rebinding of the
		// @ConfigurationProperties beans fails too, and Atlas, called first, has already
		// rejected the change.
		int status = refreshStatus(
				Map.of(WEIGHT, "50", "atlas.services." + SERVICE + ".loadbalancer.all-zero-weights", "bogus"));
		System.out.println("RuntimeRulesIT: refresh with an unconvertible value answered " + status);
		assertThat(share(KEYED_CALLS, true)).as("v2 share after the second rejected change")
			.isCloseTo(50, Offset.offset(TOLERANCE_POINTS));
		assertThat(rejected()).isEqualTo(rejectedBefore + 2);
		assertThat(output.getOut())
			.contains("Invalid atlas.services." + SERVICE + ".loadbalancer.all-zero-weights = 'bogus'");

		refresh(Map.of(WEIGHT, "10"));
		assertThat(share(KEYED_CALLS, true)).as("v2 share after a later valid change")
			.isCloseTo(10, Offset.offset(TOLERANCE_POINTS));
	}

	@SuppressWarnings("unchecked")
	private static long rulesChangedAt() {
		Map<String, Object> view = management.get()
			.uri("/actuator/atlas/" + SERVICE)
			.retrieve()
			.body(new ParameterizedTypeReference<Map<String, Object>>() {
			});
		return ((Number) view.get("rulesChangedAt")).longValue();
	}

	/** Writes the rules file and refreshes the caller; the status of the answer. */
	private static int refreshStatus(Map<String, String> properties) throws IOException {
		write(properties);
		return management.post()
			.uri("/actuator/refresh")
			.exchange((request, response) -> response.getStatusCode().value());
	}

	@Test
	@Order(3)
	void theStrategyOfTheServiceChangesAtRuntime(CapturedOutput output) throws Exception {
		refresh(Map.of(WEIGHT, "0"));
		List<String> before = sequence(40);
		refresh(Map.of(WEIGHT, "0", "atlas.services." + SERVICE + ".loadbalancer.strategy", "smooth-round-robin"));
		List<String> after = sequence(40);
		System.out
			.println("RuntimeRulesIT: weighted-random " + before + "\nRuntimeRulesIT: smooth-round-robin " + after);
		// Weighted random over two equal instances repeats one in 39 steps but with
		// probability 2^-38: this cannot fail but by a bug.
		assertThat(alternates(before)).as("weighted-random's sequence alternates strictly").isFalse();
		assertThat(alternates(after)).as("smooth-round-robin's sequence alternates strictly").isTrue();
		assertThat(output.getOut()).contains("Atlas rules of service '" + SERVICE + "' changed: ")
			.contains("strategy weighted-random → smooth-round-robin");
	}

	/** The answers of {@code count} sequential calls, in order. */
	private static List<String> sequence(int count) {
		List<String> ports = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			ports.add(client.get().uri("http://" + SERVICE + "/who").retrieve().body(String.class));
		}
		return ports;
	}

	private static boolean alternates(List<String> answers) {
		for (int i = 1; i < answers.size(); i++) {
			if (answers.get(i).equals(answers.get(i - 1))) {
				return false;
			}
		}
		return true;
	}

	private static double rejected() {
		MeterRegistry meters = caller.getBean(MeterRegistry.class);
		Counter counter = meters.find(RuntimeRules.REJECTED_METER).tag("service", SERVICE).counter();
		return (counter != null) ? counter.count() : 0;
	}

	/** Writes the rules file and refreshes the caller; the keys Spring Cloud changed. */
	private static List<String> refresh(Map<String, String> properties) throws IOException {
		write(properties);
		List<String> changed = management.post()
			.uri("/actuator/refresh")
			.retrieve()
			.body(new ParameterizedTypeReference<List<String>>() {
			});
		return (changed != null) ? changed : List.of();
	}

	private static void write(Map<String, String> properties) throws IOException {
		RulesFiles.write(rules, properties);
	}

	private static String format(double percent) {
		return String.format(Locale.ROOT, "%.0f", percent);
	}

	/**
	 * The share of {@code v2}, in percent, over the next {@code calls} calls, sent from
	 * {@value #MEASURING_THREADS} threads: with a distinct user id each ({@code keyed}),
	 * or without a key. Every call must succeed.
	 */
	private static double share(int calls, boolean keyed) throws Exception {
		AtomicInteger next = new AtomicInteger();
		LongAdder v2 = new LongAdder();
		ExecutorService threads = Executors.newFixedThreadPool(MEASURING_THREADS);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < MEASURING_THREADS; t++) {
				workers.add(threads.submit(() -> {
					for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
						RestClient.RequestHeadersSpec<?> request = client.get().uri("http://" + SERVICE + "/who");
						if (keyed) {
							request = request.header("X-User-Id", "user-" + i);
						}
						if ("v2".equals(request.retrieve().body(String.class))) {
							v2.increment();
						}
					}
					return null;
				}));
			}
			for (Future<?> worker : workers) {
				worker.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
		return 100.0 * v2.sum() / calls;
	}

	/** Threads calling the service without a key until closed, counting failures. */
	private static final class Background implements AutoCloseable {

		private final ExecutorService threads;

		private final List<Future<?>> workers = new ArrayList<>();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final LongAdder sent = new LongAdder();

		private final LongAdder failed = new LongAdder();

		private final AtomicReference<@Nullable Throwable> firstFailure = new AtomicReference<>();

		Background(int count) {
			this.threads = Executors.newFixedThreadPool(count);
			for (int i = 0; i < count; i++) {
				this.workers.add(this.threads.submit(() -> {
					while (this.running.get()) {
						try {
							client.get().uri("http://" + SERVICE + "/who").retrieve().body(String.class);
						}
						catch (RuntimeException ex) {
							this.failed.increment();
							this.firstFailure.compareAndSet(null, ex);
						}
						this.sent.increment();
					}
					return null;
				}));
			}
		}

		void assertNoFailure() throws Exception {
			this.running.set(false);
			for (Future<?> worker : this.workers) {
				worker.get(30, TimeUnit.SECONDS);
			}
			System.out.printf(Locale.ROOT, "RuntimeRulesIT: background traffic %d calls, %d failed%n", this.sent.sum(),
					this.failed.sum());
			assertThat(this.sent.sum()).as("background calls").isPositive();
			assertThat(this.failed.sum()).as("failed background calls (first: %s)", this.firstFailure.get()).isZero();
		}

		@Override
		public void close() {
			this.running.set(false);
			this.threads.shutdownNow();
		}

	}

}
