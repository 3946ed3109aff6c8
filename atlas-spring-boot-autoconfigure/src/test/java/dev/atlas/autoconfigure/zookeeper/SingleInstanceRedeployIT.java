package dev.atlas.autoconfigure.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.atlas.autoconfigure.Attempts;
import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A service with a single instance is redeployed, with real applications on a real
 * (in-process) ZooKeeper: the caller has been calling the instance; the instance stops
 * gracefully (its context closes: Atlas's lifecycle deregisters it, then drains for 1.5 s
 * while still serving, then its web server stops); from its deregistration on, no call
 * reaches its address: each call gets "no instance available"
 * ({@link NoInstanceAvailableException}) until the replacement registers on another port,
 * then the replacement. Last-known-good must not keep the old list over the empty answer
 * that follows ZooKeeper's deletion event (a deregistered instance is not chosen after
 * the event, plus one dispatch step).
 *
 * <p>
 * The deregistration moment is when the test's own ZooKeeper client (a separate session,
 * watching the service's registry path) sees the instance node deleted. The caller's
 * watch gets the same event on its own session and evicts asynchronously, so attempts
 * that started up to {@value #DISPATCH_ALLOWANCE_MS} ms after that moment (one dispatch
 * step on a loaded two-core machine) may still go to the old address; the measured delay
 * is printed.
 */
class SingleInstanceRedeployIT {

	private static final String SERVICE = "solo";

	private static final long DISPATCH_ALLOWANCE_MS = 200;

	private ZooKeeperApps apps;

	private CuratorFramework zookeeper;

	@BeforeEach
	void start() throws Exception {
		this.apps = new ZooKeeperApps();
		this.zookeeper = CuratorFrameworkFactory.newClient(this.apps.connectString(), new RetryOneTime(100));
		this.zookeeper.start();
	}

	@AfterEach
	void stop() throws Exception {
		this.zookeeper.close();
		this.apps.close();
	}

	@Test
	void afterTheOnlyInstanceDeregistersNoCallReachesItsAddressAndTheReplacementServes() throws Exception {
		ConfigurableApplicationContext old = this.apps.start(WhoApp.class, SERVICE, "atlas.lifecycle.drain=1500ms");
		ConfigurableApplicationContext caller = this.apps.start(Attempts.RecordingWhoApp.class, "solo-caller",
				"app.target=" + SERVICE, "atlas.warmup.enabled=false");
		ZooKeeperApps.awaitInstances(caller, SERVICE, 1);
		int oldPort = ZooKeeperApps.port(old);
		WhoApp oldApp = old.getBean(WhoApp.class);
		Attempts attempts = caller.getBean(Attempts.class);

		AtomicLong deletedAt = new AtomicLong();
		AtomicLong createdAt = new AtomicLong();
		try (CuratorCache registry = CuratorCache.build(this.zookeeper, "/services/" + SERVICE)) {
			registry.listenable().addListener(CuratorCacheListener.builder().forDeletes((node) -> {
				if (node.getPath().startsWith("/services/" + SERVICE + "/")) {
					deletedAt.compareAndSet(0, System.currentTimeMillis());
				}
			}).forCreates((node) -> {
				if (deletedAt.get() != 0 && node.getPath().startsWith("/services/" + SERVICE + "/")) {
					createdAt.compareAndSet(0, System.currentTimeMillis());
				}
			}).build());
			registry.start();
			try (Calls calls = new Calls(caller.getBean(WhoApp.class), 3)) {
				// The caller has seen it.
				await().atMost(Duration.ofSeconds(10)).until(() -> calls.answered(String.valueOf(oldPort)) >= 20);

				Thread closing = new Thread(old::close, "closing-old");
				closing.start();
				await().atMost(Duration.ofSeconds(10)).until(() -> deletedAt.get() != 0);
				long cutoff = deletedAt.get() + DISPATCH_ALLOWANCE_MS;
				await().until(() -> System.currentTimeMillis() >= cutoff);
				// read at or after the cutoff: counts every call it served before it
				int servedAtCutoff = oldApp.served();
				closing.join(30_000);
				assertThat(closing.isAlive()).as("old instance closed").isFalse();
				// Calls go on for a while with no instance at all.
				await().atMost(Duration.ofSeconds(10)).until(() -> calls.noInstance() >= 20);

				ConfigurableApplicationContext replacement = this.apps.start(WhoApp.class, SERVICE);
				String newPort = String.valueOf(ZooKeeperApps.port(replacement));
				await().atMost(Duration.ofSeconds(10)).until(() -> calls.answered(newPort) >= 20);
				calls.close();

				List<Attempts.Event> late = attempts.starts()
					.stream()
					.filter((start) -> start.port() == oldPort && start.at() > deletedAt.get())
					.toList();
				long lastToOld = attempts.starts()
					.stream()
					.filter((start) -> start.port() == oldPort)
					.mapToLong(Attempts.Event::at)
					.max()
					.orElseThrow();
				long firstToNew = attempts.starts()
					.stream()
					.filter((start) -> String.valueOf(start.port()).equals(newPort))
					.mapToLong(Attempts.Event::at)
					.min()
					.orElseThrow();
				System.out.printf(
						"SingleInstanceRedeployIT: last attempt to the old address %+d ms from its deletion event "
								+ "(%d attempts after the event, allowance %d ms); %d calls got no instance; first "
								+ "attempt to the replacement %d ms after its node was created; %d calls, %d "
								+ "served by the old instance after the cutoff%n",
						lastToOld - deletedAt.get(), late.size(), DISPATCH_ALLOWANCE_MS, calls.noInstance(),
						firstToNew - createdAt.get(), calls.total(), oldApp.served() - servedAtCutoff);

				assertThat(late)
					.as("attempts to the old address after its deletion event + %d ms", DISPATCH_ALLOWANCE_MS)
					.allMatch((start) -> start.at() <= cutoff);
				assertThat(oldApp.served()).as("calls the old instance served after the cutoff")
					.isEqualTo(servedAtCutoff);
				assertThat(calls.after(cutoff)).as("outcomes of calls started after the cutoff")
					.allMatch((outcome) -> outcome.equals("no-instance") || outcome.equals(newPort))
					.contains("no-instance", newPort);
				assertThat(calls.failures()).as("calls that failed otherwise than with no instance available")
					.isEmpty();
			}
		}
	}

	/** Calls from a few threads, 5 ms apart, until closed; keeps each call's outcome. */
	private static final class Calls implements AutoCloseable {

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final List<Thread> threads = new ArrayList<>();

		/** Start time and outcome: the answer, or "no-instance", or the exception. */
		private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

		Calls(WhoApp calls, int threads) {
			for (int i = 0; i < threads; i++) {
				Thread thread = new Thread(() -> {
					while (this.running.get()) {
						long start = System.currentTimeMillis();
						String outcome;
						try {
							outcome = calls.call("rest-template");
						}
						catch (NoInstanceAvailableException ex) {
							outcome = "no-instance";
						}
						catch (RuntimeException ex) {
							outcome = "failed: " + ex;
						}
						this.outcomes.add(new Outcome(start, outcome));
						// pacing, not a wait for anything
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
					}
				}, "calls-" + i);
				thread.start();
				this.threads.add(thread);
			}
		}

		long answered(String answer) {
			return this.outcomes.stream().filter((outcome) -> outcome.outcome.equals(answer)).count();
		}

		long noInstance() {
			return answered("no-instance");
		}

		int total() {
			return this.outcomes.size();
		}

		List<String> after(long time) {
			return this.outcomes.stream().filter((outcome) -> outcome.startedAt > time).map(Outcome::outcome).toList();
		}

		List<String> failures() {
			return this.outcomes.stream()
				.map(Outcome::outcome)
				.filter((outcome) -> outcome.startsWith("failed"))
				.toList();
		}

		@Override
		public void close() throws InterruptedException {
			this.running.set(false);
			for (Thread thread : this.threads) {
				thread.join(5000);
			}
		}

		private record Outcome(long startedAt, String outcome) {
		}

	}

}
