package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Once shutdown (SIGTERM or preStop) has begun, a held-back registration never happens,
 * and one racing with shutdown does not leave the instance registered. Time is a fake
 * scheduler that only records the delayed task (the test runs it when it chooses);
 * "registering right now" is a registration blocked on a latch.
 */
@ExtendWith(OutputCaptureExtension.class)
class LosslessRegistrationTest {

	private static final String CANCELLED = "the pending registration of this instance is cancelled";

	private final List<String> steps = new CopyOnWriteArrayList<>();

	private final WebContext context = new WebContext();

	private final FakeScheduler scheduler = new FakeScheduler();

	private final FakeRegistration registration = new FakeRegistration(this.context, this.steps, false);

	@BeforeEach
	void refresh() {
		this.context.refresh();
	}

	@AfterEach
	void close() {
		this.context.close();
	}

	private LosslessRegistration lossless(Duration delay) {
		LosslessRegistration lossless = new LosslessRegistration(this.context, delay, this.scheduler);
		lossless.defer(AutoRegistration.of(this.registration), FakeRegistration.webServerStarted(this.context));
		return lossless;
	}

	private GracefulShutdown shutdown(LosslessRegistration lossless, Duration deregisterTimeout) {
		return new GracefulShutdown(this.context, List.of(AutoRegistration.of(this.registration)), lossless,
				Duration.ZERO, deregisterTimeout, new SimpleMeterRegistry(), Clock.systemUTC(), (duration) -> {
				}, false, null);
	}

	private void ready(LosslessRegistration lossless) {
		lossless.onApplicationEvent(new AvailabilityChangeEvent<>(this.context, ReadinessState.ACCEPTING_TRAFFIC));
	}

	/**
	 * Spring Boot publishes readiness inside {@code SpringApplication.run}: the
	 * registry's exception reaching it fails startup, as it would have without Atlas.
	 */
	@Test
	void aRegistrationTheRegistryRefusesFailsTheReadinessEvent() {
		this.registration.onRegister(() -> {
			throw new IllegalStateException("registry refused on purpose");
		});
		LosslessRegistration lossless = lossless(Duration.ZERO);
		assertThatThrownBy(() -> ready(lossless)).hasMessage("registry refused on purpose");
		assertThat(this.steps).isEmpty();
		assertThat(lossless.registrationFailed()).isTrue();
	}

	/**
	 * The application failing to start because its registration failed was never routed
	 * to: closing it does not wait a drain, not even on Kubernetes.
	 */
	@Test
	void afterAFailedRegistrationShutdownDoesNotDrainEvenOnKubernetes() {
		this.registration.onRegister(() -> {
			throw new IllegalStateException("registry refused on purpose");
		});
		LosslessRegistration lossless = lossless(Duration.ZERO);
		assertThatThrownBy(() -> ready(lossless)).hasMessage("registry refused on purpose");
		List<Duration> drains = new CopyOnWriteArrayList<>();
		GracefulShutdown shutdown = new GracefulShutdown(this.context, List.of(AutoRegistration.of(this.registration)),
				lossless, Duration.ofSeconds(30), Duration.ofSeconds(3), new SimpleMeterRegistry(), Clock.systemUTC(),
				drains::add, true, null);
		shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED);
		assertThat(drains).isEmpty();
	}

	@Test
	void aRegistrationTheRegistryRefusesAfterTheDelayClosesTheApplication(CapturedOutput output) {
		this.registration.onRegister(() -> {
			throw new IllegalStateException("registry refused on purpose");
		});
		LosslessRegistration lossless = lossless(Duration.ofSeconds(5));
		ready(lossless);
		assertThat(this.context.isActive()).isTrue();
		this.scheduler.runAll();
		assertThat(this.context.isActive()).isFalse();
		assertThat(output.getOut()).contains("Registration after atlas.lifecycle.register-delay failed");
		// ready (and routed to, on Kubernetes) for the whole delay: it drains like any
		// other
		assertThat(lossless.registrationFailed()).isFalse();
	}

	@Test
	void registersAfterTheDelay() {
		LosslessRegistration lossless = lossless(Duration.ofSeconds(5));
		ready(lossless);
		assertThat(this.scheduler.delays).containsExactly(Duration.ofSeconds(5));
		assertThat(this.steps).isEmpty();
		this.scheduler.runAll();
		assertThat(this.steps).containsExactly("register");
	}

	@Test
	void shutdownDuringTheDelayCancelsTheRegistration(CapturedOutput output) {
		LosslessRegistration lossless = lossless(Duration.ofSeconds(5));
		ready(lossless);
		// SIGTERM at 2 s of the 5 s delay.
		shutdown(lossless, Duration.ofSeconds(3)).runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED);
		assertThat(this.scheduler.futures).singleElement().satisfies((future) -> assertThat(future).isCancelled());
		assertThat(output.getOut().lines().filter((line) -> line.contains(CANCELLED))).hasSize(1);
		// Even if the delayed task still ran (it was already due), it must not register.
		this.scheduler.runAll();
		assertThat(this.steps).isEmpty();
		assertThat(this.registration.isRunning()).isFalse();
	}

	@Test
	void theRootContextClosingCancelsTheRegistrationWhenAtlasShutdownSequenceIsOff() {
		LosslessRegistration lossless = lossless(Duration.ofSeconds(5));
		ready(lossless);
		lossless.onApplicationEvent(new ContextClosedEvent(new GenericApplicationContext()));
		assertThat(this.scheduler.futures).singleElement().satisfies((future) -> assertThat(future).isNotCancelled());
		lossless.onApplicationEvent(new ContextClosedEvent(this.context));
		this.scheduler.runAll();
		assertThat(this.steps).isEmpty();
	}

	@Test
	void shutdownBeforeReadinessMeansNeverRegistering() {
		LosslessRegistration lossless = lossless(Duration.ZERO);
		shutdown(lossless, Duration.ofSeconds(3)).runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED);
		ready(lossless);
		lossless.defer(AutoRegistration.of(this.registration), FakeRegistration.webServerStarted(this.context));
		this.scheduler.runAll();
		assertThat(this.steps).isEmpty();
	}

	@Test
	void aRegistrationUnderWayWhenShutdownBeginsIsDeregisteredAfterItReturns(CapturedOutput output) throws Exception {
		CountDownLatch registering = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		this.registration.onRegister(() -> {
			registering.countDown();
			block(release);
		});
		LosslessRegistration lossless = lossless(Duration.ofSeconds(5));
		ready(lossless);
		CompletableFuture<Void> registration = CompletableFuture.runAsync(this.scheduler::runAll);
		assertThat(registering.await(10, TimeUnit.SECONDS)).isTrue();
		Thread[] shutdownThread = new Thread[1];
		CompletableFuture<Boolean> shutdown = CompletableFuture.supplyAsync(() -> {
			shutdownThread[0] = Thread.currentThread();
			return shutdown(lossless, Duration.ofSeconds(30)).runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED);
		});
		// The shutdown waits for the registration under way instead of deregistering
		// nothing and letting it land afterwards.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> shutdownThread[0] != null && shutdownThread[0].getState() == Thread.State.TIMED_WAITING);
		assertThat(shutdown).isNotDone();
		release.countDown();
		assertThat(shutdown.get(10, TimeUnit.SECONDS)).isTrue();
		registration.get(10, TimeUnit.SECONDS);
		assertThat(this.steps).containsExactly("register", "deregister");
		assertThat(this.registration.isRunning()).isFalse();
		// The delayed task was running (its future not done, so cancel() answered true):
		// nothing was cancelled, and the log must not say so.
		assertThat(output.getOut()).doesNotContain(CANCELLED);
	}

	@Test
	void aRegistrationThatOutlastsTheWaitDeregistersItselfWhenItReturns() throws Exception {
		CountDownLatch registering = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		this.registration.onRegister(() -> {
			registering.countDown();
			block(release);
		});
		LosslessRegistration lossless = lossless(Duration.ZERO);
		CompletableFuture<Void> registration = CompletableFuture.runAsync(() -> ready(lossless));
		assertThat(registering.await(10, TimeUnit.SECONDS)).isTrue();
		// The registry hangs longer than the shutdown waits for it.
		shutdown(lossless, Duration.ofMillis(50)).runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED);
		assertThat(this.steps).isEmpty();
		release.countDown();
		registration.get(10, TimeUnit.SECONDS);
		assertThat(this.steps).containsExactly("register", "deregister");
		assertThat(this.registration.isRunning()).isFalse();
	}

	private static void block(CountDownLatch latch) {
		try {
			if (!latch.await(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the test never released the registration");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Records delayed tasks; {@link #runAll()} runs the ones not cancelled. */
	private static final class FakeScheduler implements LosslessRegistration.Scheduler {

		private final List<Duration> delays = new CopyOnWriteArrayList<>();

		private final List<Runnable> tasks = new CopyOnWriteArrayList<>();

		private final List<CompletableFuture<Void>> futures = new CopyOnWriteArrayList<>();

		@Override
		public Future<?> schedule(Runnable task, Duration delay) {
			this.delays.add(delay);
			this.tasks.add(task);
			CompletableFuture<Void> future = new CompletableFuture<>();
			this.futures.add(future);
			return future;
		}

		/** Runs every task, cancelled or not, as a timer that already fired would. */
		void runAll() {
			for (Runnable task : new ArrayList<>(this.tasks)) {
				task.run();
			}
		}

	}

}
