package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.support.GenericApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shutdown sequence on fake time: one {@link MockClock} drives the meter registry,
 * the {@link Clock} behind {@code deregisteredAt}, the drain (the sleeper advances it
 * instead of waiting) and slow deregistrations (a registration's stop advances it).
 */
class GracefulShutdownTest {

	private final MockClock time = new MockClock();

	private final Clock clock = new Clock() {

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(GracefulShutdownTest.this.time.wallTime());
		}

	};

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry(SimpleConfig.DEFAULT, this.time);

	/** What happened, in order. */
	private final List<String> steps = new CopyOnWriteArrayList<>();

	/** The draining gauge, read by the sleeper while it waits out each drain. */
	private final List<Double> drainingWhileDraining = new CopyOnWriteArrayList<>();

	/** A web application's root context, unless a test uses {@link #nonWebContext}. */
	private final GenericApplicationContext context = new WebContext();

	private final GenericApplicationContext nonWebContext = new GenericApplicationContext();

	@BeforeEach
	void context() {
		for (GenericApplicationContext each : List.of(this.context, this.nonWebContext)) {
			each.addApplicationListener((ApplicationListener<ApplicationEvent>) (event) -> {
				if (event instanceof AvailabilityChangeEvent<?> availability) {
					this.steps.add("readiness " + availability.getState());
				}
			});
			each.refresh();
		}
	}

	@AfterEach
	void close() {
		this.context.close();
		this.nonWebContext.close();
	}

	/** A web application outside Kubernetes. */
	private GracefulShutdown shutdown(Duration drain, FakeRegistration... registrations) {
		return shutdown(this.context, false, drain, registrations);
	}

	private GracefulShutdown shutdown(GenericApplicationContext context, boolean onKubernetes, Duration drain,
			FakeRegistration... registrations) {
		return new GracefulShutdown(context, Stream.of(registrations).map(AutoRegistration::of).toList(), null, drain,
				Duration.ofSeconds(30), this.meters, this.clock, (duration) -> {
					this.steps.add("drain " + duration);
					this.drainingWhileDraining.add(draining());
					this.time.add(duration);
				}, onKubernetes, null);
	}

	/**
	 * A registration whose deregistration takes {@code stopTakes} of fake time.
	 * @param running whether it is registered
	 * @param stopTakes how long deregistering takes
	 * @return the registration
	 */
	private FakeRegistration registration(boolean running, Duration stopTakes) {
		return new FakeRegistration(this.context, this.steps, running).onStop(() -> this.time.add(stopTakes));
	}

	private double draining() {
		return this.meters.get(GracefulShutdown.DRAINING_METER).gauge().value();
	}

	private Timer drainTimer() {
		return this.meters.get(GracefulShutdown.DRAIN_METER).timer();
	}

	@Test
	void deregistersThenRefusesTrafficThenDrainsWithoutRealWaiting() {
		long start = this.clock.millis();
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(30), registration(true, Duration.ZERO));
		assertThat(draining()).isZero();
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
		assertThat(this.steps).containsExactly("deregister", "readiness REFUSING_TRAFFIC", "drain PT30S");
		assertThat(this.drainingWhileDraining).containsExactly(1.0);
		assertThat(draining()).isZero();
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(start);
		assertThat(drainTimer().count()).isEqualTo(1);
		assertThat(drainTimer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(30_000);
	}

	@Test
	void theDrainTimerExcludesASlowDeregistration() {
		long start = this.clock.millis();
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(3), registration(true, Duration.ofSeconds(5)));
		shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(start + 5_000);
		assertThat(drainTimer().count()).isEqualTo(1);
		assertThat(drainTimer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(3_000);
	}

	/**
	 * Kubernetes discovery (or registration turned off) registers nothing; Kubernetes
	 * takes the pod out of its endpoints by readiness, so on SIGTERM the pod must refuse
	 * traffic and still drain while that happens.
	 */
	@Test
	void onKubernetesAWebApplicationThatIsNotRegisteredRefusesTrafficAndStillDrains() {
		GracefulShutdown shutdown = shutdown(this.context, true, Duration.ofSeconds(30),
				registration(false, Duration.ZERO));
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
		assertThat(this.steps).containsExactly("readiness REFUSING_TRAFFIC", "drain PT30S");
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(-1);
		assertThat(drainTimer().count()).isEqualTo(1);
		assertThat(drainTimer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(30_000);
	}

	/**
	 * An unregistered application drains on preStop anywhere: a preStop call means an
	 * orchestrator is taking the instance out, so an unregistered web application drains
	 * outside Kubernetes too.
	 */
	@Test
	void onPreStopAWebApplicationWithoutAnyRegistrationDrainsOutsideKubernetes() {
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(5));
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.PRE_STOP)).isTrue();
		assertThat(this.steps).containsExactly("readiness REFUSING_TRAFFIC", "drain PT5S");
		assertThat(drainTimer().count()).isEqualTo(1);
		assertThat(drainTimer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(5_000);
	}

	/**
	 * A local run, registration turned off outside Kubernetes, a test's context closing:
	 * nothing reads readiness to route here, so closing refuses traffic and does not
	 * wait.
	 */
	@Test
	void outsideKubernetesAWebApplicationThatIsNotRegisteredRefusesTrafficAndDoesNotDrainOnClose() {
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(30), registration(false, Duration.ZERO));
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
		assertThat(this.steps).containsExactly("readiness REFUSING_TRAFFIC");
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(-1);
		assertThat(drainTimer().count()).isZero();
	}

	/**
	 * Registration turned off in the registry's own settings (e.g.
	 * {@code spring.cloud.zookeeper.discovery.register=false}): the auto-registration
	 * starts and reports running, but nothing went through the service registry, so the
	 * application is not registered.
	 */
	@Test
	void aRunningAutoRegistrationThatNeverRegisteredCountsAsNotRegistered() {
		RegistrationMetadata metadata = new RegistrationMetadata(Map.of(), this.clock);
		GracefulShutdown shutdown = new GracefulShutdown(this.context,
				List.of(AutoRegistration.of(registration(true, Duration.ZERO))), null, Duration.ofSeconds(30),
				Duration.ofSeconds(30), this.meters, this.clock, (duration) -> {
					this.steps.add("drain " + duration);
					this.time.add(duration);
				}, false, metadata);
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
		assertThat(this.steps).containsExactly("readiness REFUSING_TRAFFIC");
		assertThat(drainTimer().count()).isZero();
	}

	@Test
	void outsideKubernetesARegisteredApplicationStillDrainsOnClose() {
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(30), registration(true, Duration.ZERO));
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
		assertThat(this.steps).containsExactly("deregister", "readiness REFUSING_TRAFFIC", "drain PT30S");
		assertThat(drainTimer().count()).isEqualTo(1);
	}

	@Test
	void aNonWebApplicationThatIsNotRegisteredRefusesTrafficAndDoesNotDrainEvenOnKubernetes() {
		GracefulShutdown shutdown = shutdown(this.nonWebContext, true, Duration.ofSeconds(30),
				registration(false, Duration.ZERO));
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.PRE_STOP)).isTrue();
		assertThat(this.steps).containsExactly("readiness REFUSING_TRAFFIC");
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(-1);
		assertThat(drainTimer().count()).isZero();
	}

	@Test
	void aSecondRunDoesNothing() {
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(1), registration(true, Duration.ZERO));
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
		assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isFalse();
		assertThat(this.steps).containsExactly("deregister", "readiness REFUSING_TRAFFIC", "drain PT1S");
		assertThat(drainTimer().count()).isEqualTo(1);
	}

	@Test
	void anInterruptedDrainEndsTheDrainAndKeepsTheInterrupt() {
		GracefulShutdown shutdown = new GracefulShutdown(this.context,
				List.of(AutoRegistration.of(registration(true, Duration.ZERO))), null, Duration.ofSeconds(30),
				Duration.ofSeconds(30), this.meters, this.clock, (duration) -> {
					throw new InterruptedException();
				}, false, null);
		try {
			assertThat(shutdown.runAndWait(GracefulShutdown.Trigger.CONTEXT_CLOSED)).isTrue();
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(drainTimer().count()).isEqualTo(1);
	}

}
