package dev.atlas.autoconfigure.overload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.stats.InstanceStats;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fleet over capacity, with real applications on a real (in-process) ZooKeeper: four
 * providers that answer 503 at once above 4 requests in flight (50 ms each: 320 req/s
 * together), and a closed loop of 21 callers, 1.33 times what the fleet holds at once.
 * With Atlas's defaults (retry on, its budget, outlier detection) the retries stay within
 * the budget, goodput is at least as high as without retries, and no live provider is
 * ejected for its overload 503s; when one provider stops, it alone is ejected. The
 * figures are printed for the record (docs/overload.md).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OverloadIT {

	private static final int CAPACITY = 4;

	/**
	 * Each provider's answer time, ms. Short, so that the requests per second are many
	 * next to the budget's reserve of 10 retries per second; the five applications share
	 * this JVM's two cores, which drove 790 to 1,170 a second in our runs (most of them
	 * answered 503 at once).
	 */
	private static final int DELAY_MILLIS = 50;

	private static final int PROVIDERS = 4;

	/** 1.33 × the requests the fleet serves at once. */
	private static final int CALLERS = 21;

	private static final Duration RUN = Duration.ofSeconds(4);

	private static final Duration WARMUP = Duration.ofSeconds(3);

	private static ZooKeeperApps apps;

	private static final List<ConfigurableApplicationContext> providers = new ArrayList<>();

	private static ConfigurableApplicationContext atlas;

	private static ConfigurableApplicationContext noRetry;

	/** Goodput without retries, req/s: the bar. */
	private static double goodputWithoutRetries;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		for (int i = 0; i < PROVIDERS; i++) {
			providers.add(
					apps.start(WhoApp.class, "capped", "app.capacity=" + CAPACITY, "app.delay=" + DELAY_MILLIS + "ms"));
		}
		atlas = apps.start(WhoApp.class, "atlas-caller", "app.target=capped", "atlas.warmup.enabled=false");
		noRetry = apps.start(WhoApp.class, "plain-caller", "app.target=capped", "atlas.warmup.enabled=false",
				"spring.cloud.loadbalancer.retry.enabled=false");
		ZooKeeperApps.awaitInstances(atlas, "capped", PROVIDERS);
		ZooKeeperApps.awaitInstances(noRetry, "capped", PROVIDERS);
		// the applications share one JVM: the first seconds of load compile its code, and
		// the measured runs should not differ by which one ran first
		load(noRetry, 1, WARMUP);
		load(atlas, 1, WARMUP);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	/**
	 * Runs the closed loop for {@link #RUN} (or {@code length}); each logical request is
	 * tried up to {@code outerTries} times by the caller's own loop.
	 */
	private static Run load(ConfigurableApplicationContext caller, int outerTries) throws Exception {
		return load(caller, outerTries, RUN);
	}

	private static Run load(ConfigurableApplicationContext caller, int outerTries, Duration length) throws Exception {
		int servedBefore = served();
		int okBefore = served200();
		AtomicInteger requests = new AtomicInteger();
		AtomicInteger succeeded = new AtomicInteger();
		long start = System.nanoTime();
		long end = start + length.toNanos();
		ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
		try {
			List<Future<?>> loops = new ArrayList<>();
			for (int t = 0; t < CALLERS; t++) {
				loops.add(pool.submit(() -> {
					while (System.nanoTime() < end) {
						requests.incrementAndGet();
						for (int attempt = 0; attempt < outerTries; attempt++) {
							try {
								caller.getBean(WhoApp.class).call("rest-client");
								succeeded.incrementAndGet();
								break;
							}
							catch (RuntimeException failed) {
								// a 503 or a refused connection: the outer loop may try
								// again
							}
						}
					}
				}));
			}
			for (Future<?> loop : loops) {
				loop.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		return new Run(requests.get(), succeeded.get(), served() - servedBefore, served200() - okBefore, took);
	}

	private static int served() {
		return providers.stream().mapToInt((p) -> p.getBean(WhoApp.class).served()).sum();
	}

	private static int served200() {
		return providers.stream().mapToInt((p) -> p.getBean(WhoApp.class).succeeded()).sum();
	}

	private static OutlierDetector detector(ConfigurableApplicationContext caller) {
		return caller.getBean(LoadBalancerClientFactory.class).getInstance("capped", OutlierDetector.class);
	}

	@Test
	@Order(1)
	void withoutRetriesTheFleetServesWhatItCan() throws Exception {
		Run run = load(noRetry, 1);
		System.out.println("Overload, retries off: " + run);
		goodputWithoutRetries = run.goodput();
		assertThat(run.attemptsPerRequest()).isEqualTo(1.0);
		assertThat(run.succeeded()).as("the fleet over capacity: some requests refused").isLessThan(run.requests());
	}

	@Test
	@Order(2)
	void atlasRetriesStayWithinTheBudgetAndNoLiveProviderIsEjected() throws Exception {
		Run run = load(atlas, 1);
		System.out.println("Overload, Atlas's defaults: " + run);
		assertWithinBudget(run);
		// Under steady overload the budget allows 1.2 + 10 / (requests per second), and a
		// 4 s run that starts with its reserve whole up to 1.2 + 25 / (requests per
		// second), less what the warm-up's retries, still in the window, spent. 1.25
		// therefore needs 200 to 500 requests per second: this test drove 790-1,060 (the
		// message gives the rate).
		assertThat(run.attemptsPerRequest()).as("attempts per request at %.0f requests per second", run.rate())
			.isLessThanOrEqualTo(1.25);
		// tolerance: the loops share two cores with the five applications
		assertThat(run.goodput()).as("goodput against %.0f req/s without retries", goodputWithoutRetries)
			.isGreaterThanOrEqualTo(0.9 * goodputWithoutRetries);
		assertThat(detector(atlas).health()).as("no live provider ejected for its overload 503s")
			.noneMatch(OutlierDetector.InstanceHealth::ejected);
	}

	@Test
	@Order(3)
	void aUsersOuterLoopOfThreeIsMeasured() throws Exception {
		Run run = load(atlas, 4);
		System.out.println("Overload, Atlas's defaults and an outer loop of 3 retries: " + run);
		assertThat(detector(atlas).health()).noneMatch(OutlierDetector.InstanceHealth::ejected);
	}

	@Test
	@Order(4)
	void aStoppedProviderAloneIsEjected() throws Exception {
		ConfigurableApplicationContext stopped = providers.get(PROVIDERS - 1);
		int port = ZooKeeperApps.port(stopped);
		ServiceInstance instance = atlas.getBean(DiscoveryClient.class)
			.getInstances("capped")
			.stream()
			.filter((i) -> i.getPort() == port)
			.findFirst()
			.orElseThrow();
		InstanceStats stats = atlas.getBean(LoadBalancerClientFactory.class).getInstance("capped", InstanceStats.class);
		long sentBefore = stats.requests(instance);
		((WebServerApplicationContext) stopped).getWebServer().stop();
		Run run = load(atlas, 1);
		System.out.println("Overload, one provider stopped: " + run + ", sent to the stopped one: "
				+ (stats.requests(instance) - sentBefore));
		assertThat(detector(atlas).health()).filteredOn(OutlierDetector.InstanceHealth::ejected)
			.singleElement()
			.satisfies((health) -> assertThat(health.key().port()).isEqualTo(port));
		assertThat(stats.requests(instance) - sentBefore)
			.as("ejected after 5 refused connections in a row (a few more already chosen meanwhile)")
			.isLessThanOrEqualTo(5 + CALLERS);
		assertWithinBudget(run);
	}

	/**
	 * The budget's bound: retries within 20 % of the requests its 10 s window counted
	 * (this run's, and those of an earlier run still in the window) plus the reserve of
	 * 10 per second over the window (100: at 800 requests per second, it adds about 0.03
	 * retry per request to a 4 s run), plus the retries of the requests in flight when a
	 * count was read.
	 */
	private static void assertWithinBudget(Run run) {
		RetryBudget budget = atlas.getBean(LoadBalancerClientFactory.class).getInstance("capped", RetryBudget.class);
		assertThat(run.attempts() - run.requests()).as("retries")
			.isLessThanOrEqualTo((int) Math.ceil(0.2 * budget.requests()) + 100 + CALLERS);
	}

	/** What a closed loop of {@link #CALLERS} saw, and what the providers served. */
	record Run(int requests, int succeeded, int attempts, int served200, Duration took) {

		double attemptsPerRequest() {
			return (double) this.attempts / this.requests;
		}

		double goodput() {
			return this.succeeded * 1000.0 / this.took.toMillis();
		}

		double rate() {
			return this.requests * 1000.0 / this.took.toMillis();
		}

		@Override
		public String toString() {
			return String.format("%d requests (%.0f/s), %.2f attempts each, goodput %.0f req/s (%d served 200)",
					this.requests, rate(), attemptsPerRequest(), goodput(), this.served200);
		}

	}

}
