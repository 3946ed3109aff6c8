package dev.atlas.autoconfigure.outlier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.atlas.autoconfigure.Attempts;
import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierDetector.InstanceHealth;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Passive outlier detection end to end, with real applications on a real (in-process)
 * ZooKeeper: three providers of {@code flaky} behind a caller that calls them from four
 * threads, 5 ms apart (RestTemplate, 1 s read timeout, Spring Cloud's retry on the next
 * instance as Atlas configures it). One provider starts answering 503, or hangs (accepts
 * the connection and the request and never answers: a real Spring Boot application whose
 * handler blocks, so it stays registered through Atlas's own lifecycle and a TCP connect
 * still succeeds, as with a deadlocked or overloaded process; a bare {@code ServerSocket}
 * in ZooKeeper would be a hand-made registration); it is ejected for a
 * {@code consecutive-gateway-failure}; it recovers while ejected and comes back within
 * base ejection time + one probe interval; a provider that fails again right after its
 * return is ejected for twice as long.
 *
 * <p>
 * Settings: base ejection time 2 s, HTTP probe of {@code /who} every 500 ms (300 ms
 * timeout; {@code /who} rather than the default TCP connect so that the probe sees the
 * 503 and the hang: a TCP probe passes for both), everything else Atlas's defaults
 * (max-ejection-percent 50, i.e. one instance of three, and panic threshold 50 %, which
 * one ejected instance of three does not reach). One provider fails at a time: a retry
 * leaves out only the instance that just failed (Spring Cloud's
 * {@code RetryableRequestContext} names only that one), so with two failing instances at
 * once a request could go from one to the other and fail, whatever the retry budget.
 *
 * <p>
 * Tolerance: {@value #TOLERANCE_MS} ms on top of the rule's base ejection time + one
 * probe interval, for scheduling on a loaded two-core machine and for the first HTTP
 * probe of the JVM, which starts the JDK's {@code HttpClient} (measured 200 to 500 ms
 * here, against 10 to 60 ms for later probes); the measured times are printed.
 */
class OutlierRecoveryIT {

	private static final String SERVICE = "flaky";

	private static final long BASE_MS = 2000;

	private static final long PROBE_INTERVAL_MS = 500;

	private static final long TOLERANCE_MS = 600;

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	private static List<ConfigurableApplicationContext> providers;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		providers = List.of(apps.start(WhoApp.class, SERVICE), apps.start(WhoApp.class, SERVICE),
				apps.start(WhoApp.class, SERVICE));
		// No retry budget: the traffic (about 650 calls/s) must see no failure while an
		// instance answers 503 for the 1 s a run of 503s lasts before it ejects, a third
		// of the calls then needing a retry; the budget (20 % of the calls, plus 10 a
		// second) refuses some of them, which is not what this test measures.
		caller = apps.start(Attempts.RecordingWhoApp.class, "flaky-caller", "app.target=" + SERVICE,
				"app.read-timeout=1s", "atlas.warmup.enabled=false", "atlas.retry.budget.enabled=false",
				"atlas.outlier.base-ejection-time=2s", "atlas.outlier.probe.type=http", "atlas.outlier.probe.path=/who",
				"atlas.outlier.probe.interval=500ms", "atlas.outlier.probe.timeout=300ms");
		ZooKeeperApps.awaitInstances(caller, SERVICE, 3);
		// The service's child context (and its detector) exists from the first call.
		caller.getBean(WhoApp.class).call("rest-template");
	}

	@AfterAll
	static void stop() throws Exception {
		providers.forEach((provider) -> provider.getBean(WhoApp.class).release());
		apps.close();
	}

	@Test
	void a503InstanceIsEjectedReturnsWithinBasePlusOneProbeIntervalAndFailingAgainDoublesItsEjection()
			throws Exception {
		ConfigurableApplicationContext failing = providers.get(0);
		WhoApp provider = failing.getBean(WhoApp.class);
		ServiceInstance instance = instance(failing);
		double ejections = ejections();
		try (Traffic traffic = new Traffic(4)) {
			provider.fail(true);
			InstanceHealth first = awaitEjection(instance);
			provider.fail(false);
			assertThat(ejections()).as("ejections{reason=consecutive-gateway-failure}").isEqualTo(ejections + 1);
			assertThat(first.timesEjected()).isEqualTo(1);
			assertThat(first.ejectedUntil() - first.ejectedAt()).isEqualTo(BASE_MS);
			long returned = awaitReturn(instance, first);
			long served = firstServedAfter(failing, first);
			report("503, first ejection", first, returned, served);
			assertReturnedInTime(failing, first, returned, served);

			// Fails again right after its return (less than one base ejection time
			// later): ejected for twice as long.
			provider.fail(true);
			InstanceHealth second = awaitEjection(instance);
			provider.fail(false);
			assertThat(second.ejectedAt() - returned).as("failed again within one base ejection time")
				.isLessThan(BASE_MS);
			assertThat(second.timesEjected()).isEqualTo(2);
			assertThat(second.ejectedUntil() - second.ejectedAt()).isEqualTo(2 * BASE_MS);
			assertThat(ejections()).isEqualTo(ejections + 2);
			long returnedAgain = awaitReturn(instance, second);
			long servedAgain = firstServedAfter(failing, second);
			report("503, second ejection", second, returnedAgain, servedAgain);
			assertReturnedInTime(failing, second, returnedAgain, servedAgain);
			traffic.assertNoFailure();
		}
	}

	@Test
	void aHangingInstanceIsEjectedForTimeoutsAndReturnsWithinBasePlusOneProbeInterval() throws Exception {
		ConfigurableApplicationContext hanging = providers.get(1);
		WhoApp provider = hanging.getBean(WhoApp.class);
		ServiceInstance instance = instance(hanging);
		double ejections = ejections();
		try (Traffic traffic = new Traffic(4)) {
			provider.hang();
			InstanceHealth ejection = awaitEjection(instance);
			provider.release();
			assertThat(ejections()).as("ejections{reason=consecutive-gateway-failure}").isEqualTo(ejections + 1);
			assertThat(ejection.ejectedUntil() - ejection.ejectedAt()).isEqualTo(BASE_MS * ejection.timesEjected());
			long returned = awaitReturn(instance, ejection);
			long served = firstServedAfter(hanging, ejection);
			report("hang", ejection, returned, served);
			assertReturnedInTime(hanging, ejection, returned, served);
			traffic.assertNoFailure();
			assertThat(traffic.timeouts()).as("calls that waited for the hanging instance's read timeout").isPositive();
		}
	}

	private static void assertReturnedInTime(ConfigurableApplicationContext provider, InstanceHealth ejection,
			long returned, long served) {
		long limit = ejection.ejectedUntil() + PROBE_INTERVAL_MS + TOLERANCE_MS;
		assertThat(returned).as("returned (health) after the ejection time, within one probe interval + tolerance")
			.isBetween(ejection.ejectedUntil(), limit);
		assertThat(served).as("first request served again, within one probe interval + tolerance")
			.isBetween(ejection.ejectedUntil(), limit);
		int port = ZooKeeperApps.port(provider);
		// Nothing was sent to it while it was ejected (100 ms for attempts picked as it
		// was being ejected).
		assertThat(caller.getBean(Attempts.class).starts())
			.filteredOn((start) -> start.port() == port && start.at() >= ejection.ejectedAt() + 100
					&& start.at() < ejection.ejectedUntil())
			.as("attempts sent to the instance while ejected")
			.isEmpty();
	}

	private static void report(String what, InstanceHealth ejection, long returned, long served) {
		System.out.printf(
				"OutlierRecoveryIT %s: ejection #%d for %d ms; returned %d ms after ejectedAt, "
						+ "first request served again %d ms after ejectedAt (limit %d + %d + %d tolerance)%n",
				what, ejection.timesEjected(), ejection.ejectedUntil() - ejection.ejectedAt(),
				returned - ejection.ejectedAt(), served - ejection.ejectedAt(),
				ejection.ejectedUntil() - ejection.ejectedAt(), PROBE_INTERVAL_MS, TOLERANCE_MS);
	}

	private static OutlierDetector detector() {
		return caller.getBean(LoadBalancerClientFactory.class).getInstance(SERVICE, OutlierDetector.class);
	}

	private static double ejections() {
		Counter counter = caller.getBean(MeterRegistry.class)
			.find(OutlierDetector.EJECTIONS_METER)
			.tag("service", SERVICE)
			.tag("reason", OutlierDetector.REASON_GATEWAY)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static ServiceInstance instance(ConfigurableApplicationContext provider) {
		return ZooKeeperApps.instance(caller, SERVICE, provider);
	}

	private static InstanceHealth awaitEjection(ServiceInstance instance) {
		return await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(10)).until(() -> {
			InstanceHealth health = detector().health(instance);
			return (health != null && health.ejected()) ? health : null;
		}, (health) -> health != null);
	}

	/** Polls every 10 ms until the instance is no longer ejected; returns when. */
	private static long awaitReturn(ServiceInstance instance, InstanceHealth ejection) {
		await().atMost(Duration.ofMillis(ejection.ejectedUntil() - System.currentTimeMillis() + 10_000))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> {
				InstanceHealth health = detector().health(instance);
				return health != null && !health.ejected();
			});
		return System.currentTimeMillis();
	}

	/**
	 * When the first attempt that started after the ejection was answered by the instance
	 * with a 2xx.
	 */
	private static long firstServedAfter(ConfigurableApplicationContext provider, InstanceHealth ejection) {
		int port = ZooKeeperApps.port(provider);
		Attempts attempts = caller.getBean(Attempts.class);
		return await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> attempts.completions()
				.stream()
				.filter((attempt) -> attempt.port() == port && attempt.ok()
						&& attempt.startedAt() >= ejection.ejectedAt())
				.mapToLong(Attempts.Event::at)
				.min()
				.orElse(-1), (at) -> at >= 0);
	}

	/**
	 * Calls from a few threads, 5 ms apart, until closed, keeping every failure.
	 */
	private static final class Traffic implements AutoCloseable {

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final List<Thread> threads = new ArrayList<>();

		private final List<String> failures = new CopyOnWriteArrayList<>();

		private final AtomicInteger calls = new AtomicInteger();

		private final AtomicInteger slow = new AtomicInteger();

		Traffic(int threads) {
			WhoApp calls = caller.getBean(WhoApp.class);
			for (int i = 0; i < threads; i++) {
				Thread thread = new Thread(() -> {
					while (this.running.get()) {
						long start = System.nanoTime();
						try {
							calls.call("rest-template");
						}
						catch (RuntimeException ex) {
							this.failures.add(System.currentTimeMillis() + " " + ex);
						}
						this.calls.incrementAndGet();
						if (System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(1000)) {
							this.slow.incrementAndGet();
						}
						// pacing (about 150 calls/s per thread), not a wait for anything
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
					}
				}, "traffic-" + i);
				thread.start();
				this.threads.add(thread);
			}
		}

		int timeouts() {
			return this.slow.get();
		}

		void assertNoFailure() {
			assertThat(this.failures).as("failed calls of " + this.calls.get()).isEmpty();
			System.out.printf("OutlierRecoveryIT traffic: %d calls, 0 failed, %d waited >= 1 s%n", this.calls.get(),
					this.slow.get());
		}

		@Override
		public void close() throws InterruptedException {
			this.running.set(false);
			for (Thread thread : this.threads) {
				thread.join(5000);
			}
		}

	}

}
