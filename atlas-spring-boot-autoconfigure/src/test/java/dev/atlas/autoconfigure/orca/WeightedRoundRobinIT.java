package dev.atlas.autoconfigure.orca;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.actuator.AtlasEndpoint;
import dev.atlas.loadbalancer.orca.LoadReport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The {@code weighted-round-robin} strategy end to end, on real applications and a real
 * (in-process) ZooKeeper: three providers of {@value #SERVICE} reporting their load
 * ({@code atlas.load-report.enabled=true}, rates over 2 s), each call costing them CPU
 * ({@link CostlyApp}); one of them at cost 2 (half the capacity). A caller with
 * {@code weighted-round-robin} (blackout 3 s) sends calls from {@value #THREADS} threads
 * in a closed loop. Once reports have been in for the blackout, the costly provider's
 * share converges to its share of the capacity, 0.5 ÷ 2.5 = 20 % (± 5 points); when its
 * cost goes back to 1, the shares return to a third each (± 5 points). Round robin (the
 * contrast, with the same providers) keeps a third whatever the cost. Every client type
 * asks for reports; the providers report the CPU time their calls took per second as
 * their application utilization (they share one JVM, whose process CPU would be the same
 * for all; the CPU source is covered by {@code LoadReporterTest}, and by the demo's
 * reported-load scenario, whose providers are JVMs of their own).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@SuppressWarnings("unchecked")
class WeightedRoundRobinIT {

	private static final String SERVICE = "reporting";

	private static final int THREADS = 6;

	private static final double TOLERANCE = 0.05;

	private static ZooKeeperApps apps;

	private static final List<ConfigurableApplicationContext> providers = new ArrayList<>();

	private static ConfigurableApplicationContext caller;

	private static ConfigurableApplicationContext roundRobinCaller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		for (double cost : new double[] { 1, 1, 2 }) {
			providers.add(apps.start(CostlyApp.class, SERVICE, "atlas.load-report.enabled=true",
					"atlas.load-report.window=2s", "app.cost=" + cost));
		}
		caller = apps.start(WhoApp.class, "wrr-caller", "spring.cloud.zookeeper.discovery.register=false",
				"app.target=" + SERVICE, "atlas.warmup.enabled=false",
				"management.endpoints.web.exposure.include=atlas",
				"atlas.services." + SERVICE + ".loadbalancer.strategy=weighted-round-robin",
				"atlas.services." + SERVICE + ".loadbalancer.weighted-round-robin.blackout-period=3s");
		roundRobinCaller = apps.start(WhoApp.class, "rr-caller", "spring.cloud.zookeeper.discovery.register=false",
				"app.target=" + SERVICE, "atlas.warmup.enabled=false",
				"atlas.services." + SERVICE + ".loadbalancer.strategy=smooth-round-robin");
		ZooKeeperApps.awaitInstances(caller, SERVICE, 3);
		ZooKeeperApps.awaitInstances(roundRobinCaller, SERVICE, 3);
	}

	@AfterAll
	static void stop() throws Exception {
		if (apps != null) {
			apps.close();
		}
	}

	@Test
	@Order(1)
	void roundRobinGivesTheCostlyProviderAThird() throws Exception {
		Map<String, Double> shares = shares(roundRobinCaller, Duration.ofSeconds(2));
		print("smooth-round-robin, costs 1/1/2", shares);
		assertThat(shares.get(port(2))).isCloseTo(1.0 / 3, within(TOLERANCE));
		assertThat(costly().asked()).as("calls of a caller without weighted-round-robin ask for no report").isZero();
	}

	@Test
	@Order(2)
	void theCostlyProvidersShareConvergesToItsCapacityShare() throws Exception {
		// blackout (3 s) and the providers' 2 s windows filling: then measure
		shares(caller, Duration.ofSeconds(6));
		Map<String, Double> shares = shares(caller, Duration.ofSeconds(4));
		print("weighted-round-robin, costs 1/1/2", shares);
		assertThat(costly().asked()).as("calls that asked for a report").isPositive();
		assertThat(shares.get(port(2))).as("share of the provider at cost 2").isCloseTo(0.2, within(TOLERANCE));
		assertThat(shares.get(port(0))).isCloseTo(0.4, within(TOLERANCE));
		assertThat(shares.get(port(1))).isCloseTo(0.4, within(TOLERANCE));
		// the weights in force, as the actuator shows them: the costly one's about half
		Map<String, Object> view = caller.getBean(AtlasEndpoint.class).service(SERVICE);
		Map<String, Double> weights = new HashMap<>();
		for (Map<String, Object> instance : (List<Map<String, Object>>) view.get("instances")) {
			weights.put(String.valueOf(instance.get("port")), (Double) instance.get("reportedWeight"));
		}
		System.out.println("wrr-it reported weights in force by port: " + weights);
		assertThat(weights.get(port(2)) / weights.get(port(0))).isCloseTo(0.5, within(0.15));
	}

	@Test
	@Order(3)
	void everyClientAsksForReports() throws Exception {
		WhoApp who = caller.getBean(WhoApp.class);
		for (String client : List.of("rest-template", "web-client", "feign", "rest-client")) {
			int before = asked();
			for (int i = 0; i < 10; i++) {
				who.call(client);
			}
			assertThat(asked() - before).as("calls through %s that asked for a report", client).isEqualTo(10);
		}
	}

	@Test
	@Order(4)
	void whenItsCostIsBackToNormalTheSharesAreEqualAgain() throws Exception {
		costly().cost(1);
		shares(caller, Duration.ofSeconds(5));
		Map<String, Double> shares = shares(caller, Duration.ofSeconds(4));
		print("weighted-round-robin, costs back to 1/1/1", shares);
		for (int i = 0; i < 3; i++) {
			assertThat(shares.get(port(i))).as("share of provider %d", i).isCloseTo(1.0 / 3, within(TOLERANCE));
		}
	}

	@Test
	@Order(5)
	void aReportIsWrittenOnlyWhenAskedForInTheFormatAsked() throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		URI who = URI.create("http://127.0.0.1:" + port(0) + "/who");
		HttpResponse<String> plain = http.send(HttpRequest.newBuilder(who).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(plain.headers().firstValue(LoadReport.HEADER)).isEmpty();
		HttpResponse<String> text = http.send(
				HttpRequest.newBuilder(who).header(LoadReport.FORMAT_HEADER, "TEXT").build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(text.headers().firstValue(LoadReport.HEADER)).hasValueSatisfying((value) -> {
			assertThat(value).startsWith("TEXT cpu_utilization=").contains("application_utilization=");
			assertThat(LoadReport.parse(value).rps()).isPositive();
		});
		HttpResponse<String> json = http.send(
				HttpRequest.newBuilder(who).header(LoadReport.FORMAT_HEADER, "json").build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(json.headers().firstValue(LoadReport.HEADER))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("JSON {\"cpu_utilization\":"));
		HttpResponse<String> binary = http.send(
				HttpRequest.newBuilder(who).header(LoadReport.FORMAT_HEADER, "BIN").build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(binary.headers().firstValue(LoadReport.HEADER)).isEmpty();
	}

	private static int asked() {
		return providers.stream().mapToInt((provider) -> provider.getBean(CostlyApp.class).asked()).sum();
	}

	private static CostlyApp costly() {
		return providers.get(2).getBean(CostlyApp.class);
	}

	private static String port(int provider) {
		return String.valueOf(ZooKeeperApps.port(providers.get(provider)));
	}

	/** Calls from {@value #THREADS} threads for a while; the shares of the answers. */
	private static Map<String, Double> shares(ConfigurableApplicationContext from, Duration duration)
			throws InterruptedException {
		WhoApp who = from.getBean(WhoApp.class);
		Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
		AtomicInteger failures = new AtomicInteger();
		AtomicBoolean running = new AtomicBoolean(true);
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		for (int t = 0; t < THREADS; t++) {
			threads.execute(() -> {
				while (running.get()) {
					try {
						counts.computeIfAbsent(who.call(), (port) -> new AtomicInteger()).incrementAndGet();
					}
					catch (RuntimeException ex) {
						failures.incrementAndGet();
					}
				}
			});
		}
		TimeUnit.NANOSECONDS.sleep(duration.toNanos());
		running.set(false);
		threads.shutdown();
		assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		assertThat(failures).as("failed calls").hasValue(0);
		double total = counts.values().stream().mapToInt(AtomicInteger::get).sum();
		Map<String, Double> shares = new HashMap<>();
		for (int i = 0; i < 3; i++) {
			AtomicInteger count = counts.get(port(i));
			shares.put(port(i), (count != null) ? count.get() / total : 0.0);
		}
		return shares;
	}

	private static void print(String label, Map<String, Double> shares) {
		System.out.printf(Locale.ROOT, "wrr-it %s: provider shares %.3f / %.3f / %.3f (the last at cost 2 before)%n",
				label, shares.get(port(0)), shares.get(port(1)), shares.get(port(2)));
	}

}
