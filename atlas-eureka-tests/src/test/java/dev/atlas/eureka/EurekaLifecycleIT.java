package dev.atlas.eureka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Lossless online and offline on a real (in-process) Eureka server, its caches tuned as
 * the documentation recommends (clients fetch every second, the server answers from its
 * read-write cache). Eureka's auto-registration is not Spring Cloud's generic one, so
 * without Atlas's Eureka support an instance is {@code UP} before its runners have run,
 * and on shutdown it turns {@code DOWN} as its web server stops, without a drain.
 */
class EurekaLifecycleIT {

	private EurekaApps apps;

	@BeforeEach
	void start() {
		this.apps = new EurekaApps();
	}

	@AfterEach
	void stop() {
		this.apps.close();
	}

	@Test
	void anInstanceIsUpInEurekaOnlyOnceItIsReady() throws Exception {
		CountDownLatch hold = new CountDownLatch(1);
		CountDownLatch holding = new CountDownLatch(1);
		WhoApp.hold.set(hold);
		WhoApp.holding.set(holding);
		CompletableFuture<ConfigurableApplicationContext> held = CompletableFuture.supplyAsync(
				() -> this.apps.builder(WhoApp.class, "held", "app.hold-start=true", "app.discover-at-start=true")
					.run());
		try {
			assertThat(holding.await(60, TimeUnit.SECONDS)).isTrue();
			// its web server is up and its Eureka client started; its runner has not
			// finished
			await().during(Duration.ofSeconds(3))
				.atMost(Duration.ofSeconds(4))
				.until(() -> !this.apps.statuses("HELD").contains(InstanceStatus.UP));

			hold.countDown();

			await().atMost(Duration.ofSeconds(10)).until(() -> this.apps.statuses("HELD").contains(InstanceStatus.UP));
		}
		finally {
			hold.countDown();
			held.get(60, TimeUnit.SECONDS).close();
		}
	}

	@Test
	void aRollingRestartUnderFiftyCallersFailsNoRequest() throws Exception {
		String[] drain = { "atlas.lifecycle.drain=3s" };
		List<ConfigurableApplicationContext> providers = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			providers.add(this.apps.start(WhoApp.class, "rolling", drain));
		}
		ConfigurableApplicationContext caller = this.apps.start(WhoApp.class, "rolling-caller",
				"atlas.warmup.enabled=false");
		EurekaApps.awaitInstances(caller, "rolling", 3);
		WhoApp calls = caller.getBean(WhoApp.class);
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicInteger succeeded = new AtomicInteger();
		List<Throwable> failures = new ArrayList<>();
		ExecutorService callers = Executors.newFixedThreadPool(50);
		for (int i = 0; i < 50; i++) {
			callers.execute(() -> {
				while (running.get()) {
					try {
						calls.call("rolling", Map.of());
						succeeded.incrementAndGet();
					}
					catch (RuntimeException ex) {
						synchronized (failures) {
							failures.add(ex);
						}
					}
				}
			});
		}
		List<Long> lastRequestAfterShutdownMillis = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				ConfigurableApplicationContext old = providers.remove(0);
				providers.add(this.apps.start(WhoApp.class, "rolling", drain));
				EurekaApps.awaitInstances(caller, "rolling", 4);
				WhoApp oldWho = old.getBean(WhoApp.class);
				long shutdownAt = System.nanoTime();
				old.close();
				lastRequestAfterShutdownMillis.add(TimeUnit.NANOSECONDS.toMillis(oldWho.lastServedAt() - shutdownAt));
				EurekaApps.awaitInstances(caller, "rolling", 3);
			}
		}
		finally {
			running.set(false);
			callers.shutdown();
		}
		assertThat(callers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		System.out.printf(
				"Eureka rolling restart: %d requests, %d failed; last request to each stopped "
						+ "instance after its shutdown began: %s ms%n",
				succeeded.get(), failures.size(), lastRequestAfterShutdownMillis);
		assertThat(failures).isEmpty();
		assertThat(succeeded.get()).isGreaterThan(1000);
		// each stopping instance kept serving after its shutdown began (it drained, still
		// listed by callers until their next fetch), and callers stopped choosing it
		// within
		// its 3 s drain
		assertThat(lastRequestAfterShutdownMillis).allSatisfy((millis) -> assertThat(millis).isBetween(0L, 2999L));
	}

}
