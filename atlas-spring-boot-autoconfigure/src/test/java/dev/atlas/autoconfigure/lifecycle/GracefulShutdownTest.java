package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationProperties;
import org.springframework.cloud.client.serviceregistry.Registration;
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

	private final GenericApplicationContext context = new GenericApplicationContext();

	@BeforeEach
	void context() {
		this.context.addApplicationListener((ApplicationListener<ApplicationEvent>) (event) -> {
			if (event instanceof AvailabilityChangeEvent<?> availability) {
				this.steps.add("readiness " + availability.getState());
			}
		});
		this.context.refresh();
	}

	@AfterEach
	void close() {
		this.context.close();
	}

	private GracefulShutdown shutdown(Duration drain, FakeRegistration... registrations) {
		return new GracefulShutdown(this.context, List.of(registrations), drain, Duration.ofSeconds(30), this.meters,
				this.clock, (duration) -> {
					this.steps.add("drain " + duration);
					this.time.add(duration);
				});
	}

	private Timer drainTimer() {
		return this.meters.get(GracefulShutdown.DRAIN_METER).timer();
	}

	@Test
	void deregistersThenRefusesTrafficThenDrainsWithoutRealWaiting() {
		long start = this.clock.millis();
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(30), new FakeRegistration(true, Duration.ZERO));
		assertThat(shutdown.runAndWait()).isTrue();
		assertThat(this.steps).containsExactly("deregister", "readiness REFUSING_TRAFFIC", "drain PT30S");
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(start);
		assertThat(drainTimer().count()).isEqualTo(1);
		assertThat(drainTimer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(30_000);
	}

	@Test
	void theDrainTimerExcludesASlowDeregistration() {
		long start = this.clock.millis();
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(3), new FakeRegistration(true, Duration.ofSeconds(5)));
		shutdown.runAndWait();
		assertThat(shutdown.deregisteredAt()).isEqualTo(start + 5_000);
		assertThat(drainTimer().count()).isEqualTo(1);
		assertThat(drainTimer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(3_000);
	}

	@Test
	void notRegisteredRefusesTrafficAndDoesNotDrain() {
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(30), new FakeRegistration(false, Duration.ZERO));
		assertThat(shutdown.runAndWait()).isTrue();
		assertThat(this.steps).containsExactly("readiness REFUSING_TRAFFIC");
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(shutdown.deregisteredAt()).isEqualTo(-1);
		assertThat(drainTimer().count()).isZero();
	}

	@Test
	void aSecondRunDoesNothing() {
		GracefulShutdown shutdown = shutdown(Duration.ofSeconds(1), new FakeRegistration(true, Duration.ZERO));
		assertThat(shutdown.runAndWait()).isTrue();
		assertThat(shutdown.runAndWait()).isFalse();
		assertThat(this.steps).containsExactly("deregister", "readiness REFUSING_TRAFFIC", "drain PT1S");
		assertThat(drainTimer().count()).isEqualTo(1);
	}

	@Test
	void anInterruptedDrainEndsTheDrainAndKeepsTheInterrupt() {
		GracefulShutdown shutdown = new GracefulShutdown(this.context,
				List.of(new FakeRegistration(true, Duration.ZERO)), Duration.ofSeconds(30), Duration.ofSeconds(30),
				this.meters, this.clock, (duration) -> {
					throw new InterruptedException();
				});
		try {
			assertThat(shutdown.runAndWait()).isTrue();
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(drainTimer().count()).isEqualTo(1);
	}

	/**
	 * An auto-registration that only records its deregistration, which takes
	 * {@code stopTakes} of fake time.
	 */
	private final class FakeRegistration extends AbstractAutoServiceRegistration<Registration> {

		private final Duration stopTakes;

		private volatile boolean running;

		FakeRegistration(boolean running, Duration stopTakes) {
			super(GracefulShutdownTest.this.context, null, new AutoServiceRegistrationProperties());
			this.running = running;
			this.stopTakes = stopTakes;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public void stop() {
			GracefulShutdownTest.this.steps.add("deregister");
			GracefulShutdownTest.this.time.add(this.stopTakes);
			this.running = false;
		}

		@Override
		protected Object getConfiguration() {
			return null;
		}

		@Override
		protected boolean isEnabled() {
			return true;
		}

		@Override
		protected Registration getRegistration() {
			return null;
		}

		@Override
		protected Registration getManagementRegistration() {
			return null;
		}

	}

}
