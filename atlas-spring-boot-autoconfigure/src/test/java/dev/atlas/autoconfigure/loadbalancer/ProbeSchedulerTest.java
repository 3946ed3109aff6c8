package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The shared probe executor: no thread until the first task, none after it stops. */
class ProbeSchedulerTest {

	/** Other tests' schedulers in this JVM start and stop theirs meanwhile. */
	private static final String PREFIX = "probe-scheduler-test-";

	private static long probeThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith(PREFIX) && thread.isAlive())
			.count();
	}

	@Test
	void startsNoThreadBeforeItsFirstTaskRunsTasksOffTheCallerAndStopsOnDestroy() throws Exception {
		ProbeScheduler scheduler = new ProbeScheduler(PREFIX);
		assertThat(probeThreads()).as("no thread for an application that never probes").isZero();
		CountDownLatch ran = new CountDownLatch(1);
		String[] on = new String[1];
		scheduler.schedule(() -> {
			on[0] = Thread.currentThread().getName();
			ran.countDown();
		}, 10);
		assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
		assertThat(on[0]).startsWith(PREFIX);
		scheduler.schedule(() -> {
			throw new IllegalStateException("a broken probe");
		}, 0);
		AtomicBoolean later = new AtomicBoolean();
		scheduler.schedule(() -> later.set(true), 60_000);
		// the broken probe runs at once (and is logged); the later task waits
		await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.pending() == 1);
		scheduler.destroy();
		await().atMost(Duration.ofSeconds(5)).until(() -> probeThreads() == 0);
		scheduler.schedule(() -> later.set(true), 0);
		assertThat(later).as("dropped after destroy, no exception").isFalse();
	}

}
