package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.Ordered;

/**
 * Lossless offline: the shutdown sequence of this application, run once, on the first of
 * SIGTERM (the root context's {@link ContextClosedEvent}, before any lifecycle bean
 * stops) or a preStop call ({@link #runAndWait()}):
 * <ol>
 * <li>stop registering: a registration still waiting for readiness or for
 * {@code atlas.lifecycle.register-delay} is cancelled, and one under way is waited for
 * (bounded by {@code atlas.lifecycle.deregister-timeout}), so that step 2 comes after it
 * ({@link LosslessRegistration#close});</li>
 * <li>deregister from the registry (every Spring Cloud auto-registration that registered;
 * bounded by {@code atlas.lifecycle.deregister-timeout} when the registry is unreachable:
 * one ERROR, no longer wait);</li>
 * <li>readiness {@code REFUSING_TRAFFIC}, so Kubernetes (which takes the pod out of its
 * endpoints by readiness) and health checks stop routing here;</li>
 * <li>drain: wait {@code atlas.lifecycle.drain} while still serving, so callers refresh
 * their instance lists (or Kubernetes its endpoints) and in-flight calls arrive. When
 * nothing was registered (Kubernetes discovery, registration turned off, no registry),
 * only something that reads readiness can still be routing here, so the application
 * drains only if it serves HTTP (its context is a {@link WebServerApplicationContext})
 * and either the preStop endpoint started the sequence ({@link Trigger#PRE_STOP}: an
 * orchestrator is taking it out) or it runs on Kubernetes (Spring Boot's
 * {@code CloudPlatform}, which {@code spring.main.cloud-platform=kubernetes} forces),
 * which takes the pod out of its endpoints by readiness — unless the registration failed
 * at startup ({@link LosslessRegistration#registrationFailed()}: the application is
 * closing because of it and was never routed to). Otherwise (a local run, a test's
 * context closing, registration turned off outside Kubernetes) it closes without waiting;
 * one INFO line says which case applied;</li>
 * <li>then Spring continues: Spring Boot's graceful web-server shutdown finishes
 * in-flight requests, and the registry client, a plain bean, closes last.</li>
 * </ol>
 * Child contexts (Feign clients, load-balancer clients) publish their own
 * {@code ContextClosedEvent}s to this listener too; they are ignored, so the drain
 * happens once. Spring Cloud Alibaba's own 10 s wait is set to 0 by Atlas, which owns the
 * sequence.
 *
 * <p>
 * Time is injected: {@link #deregisteredAt()} comes from a {@link Clock}, the drain is
 * waited out by a {@link Sleeper}, and {@value #DRAIN_METER} is timed with the meter
 * registry's clock. Only the deregistration timeout and the wait for a registration under
 * way are real waiting.
 *
 * <p>
 * Thread-safe; idempotent: concurrent and later calls wait for the first run and do
 * nothing else.
 *
 * @since 0.1.0
 */
public class GracefulShutdown implements ApplicationListener<ContextClosedEvent>, Ordered {

	/**
	 * Timer of the drain: from when deregistration returned (or gave up; when nothing was
	 * registered, from when traffic was refused) to the end of the wait, so a slow
	 * registry does not count; tags none.
	 */
	public static final String DRAIN_METER = "atlas.lifecycle.drain";

	/**
	 * Gauge of the shutdown sequence: 1 while this application deregisters and drains
	 * ({@link State#DRAINING}), else 0; tags none. Scraped during the drain (the
	 * management server is still up then), unlike {@value #DRAIN_METER}, which is
	 * recorded at its end.
	 */
	public static final String DRAINING_METER = "atlas.lifecycle.draining";

	private static final Logger log = LoggerFactory.getLogger(GracefulShutdown.class);

	private final ApplicationContext context;

	private final List<AutoRegistration> registrations;

	private final @Nullable LosslessRegistration lossless;

	private final @Nullable RegistrationMetadata registrationMetadata;

	private final Duration drain;

	private final Duration deregisterTimeout;

	private final MeterRegistry meterRegistry;

	private final Timer drainTimer;

	private final Clock clock;

	private final Sleeper sleeper;

	private final boolean onKubernetes;

	private final AtomicReference<CompletableFuture<Void>> run = new AtomicReference<>();

	private volatile State state = State.SERVING;

	private volatile long deregisteredAt = -1;

	/**
	 * Creates the sequence.
	 * @param context the root application context
	 * @param registrations the auto-registrations to stop
	 * @param lossless the held-back registration to stop first, or {@code null} when
	 * registration is not held back ({@code atlas.lifecycle.register-when-ready=false})
	 * @param drain wait after deregistration, not negative
	 * @param deregisterTimeout longest wait for the registry to confirm deregistration,
	 * not negative
	 * @param meterRegistry where {@value #DRAIN_METER} is recorded, timed with this
	 * registry's (monotonic) clock, and {@value #DRAINING_METER} registered
	 * @param clock source of {@link #deregisteredAt()}
	 * @param sleeper waits out the drain
	 * @param onKubernetes whether the application runs on Kubernetes (Spring Boot's
	 * {@code CloudPlatform.KUBERNETES}); then a web application that registered nothing
	 * drains on {@link Trigger#CONTEXT_CLOSED} too
	 * @param registrationMetadata what saw this application register through a
	 * {@code ServiceRegistry}, or {@code null} to trust the auto-registrations'
	 * {@code isRunning()} alone. A running auto-registration has not always registered:
	 * with registration turned off ({@code spring.cloud.zookeeper.discovery.register},
	 * {@code spring.cloud.nacos.discovery.register-enabled},
	 * {@code spring.cloud.consul.discovery.register} = false) it starts and skips the
	 * registry; such an application counts as registered only once this saw a
	 * registration
	 */
	public GracefulShutdown(ApplicationContext context, List<AutoRegistration> registrations,
			@Nullable LosslessRegistration lossless, Duration drain, Duration deregisterTimeout,
			MeterRegistry meterRegistry, Clock clock, Sleeper sleeper, boolean onKubernetes,
			@Nullable RegistrationMetadata registrationMetadata) {
		this.context = context;
		this.registrations = registrations;
		this.lossless = lossless;
		this.drain = drain;
		this.deregisterTimeout = deregisterTimeout;
		this.meterRegistry = meterRegistry;
		this.drainTimer = Timer.builder(DRAIN_METER)
			.description("Time spent draining (deregistered, still serving) before the web server stops")
			.register(meterRegistry);
		Gauge.builder(DRAINING_METER, this, (sequence) -> (sequence.state() == State.DRAINING) ? 1 : 0)
			.description("1 while this application deregisters and drains before it stops, else 0")
			.register(meterRegistry);
		this.clock = clock;
		this.sleeper = sleeper;
		this.onKubernetes = onKubernetes;
		this.registrationMetadata = registrationMetadata;
	}

	@Override
	public void onApplicationEvent(ContextClosedEvent event) {
		if (event.getApplicationContext() != this.context) {
			return;
		}
		runAndWait(Trigger.CONTEXT_CLOSED);
	}

	/**
	 * First among the listeners to the root context's closing, but for Atlas's own
	 * periodic refresh during shutdown, which must start before this sequence blocks for
	 * the drain.
	 * @return {@link Ordered#HIGHEST_PRECEDENCE} + 1
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE + 1;
	}

	/**
	 * Runs the sequence (deregister, refuse traffic, drain) if it has not run yet, and
	 * returns when the drain is over. Called by the preStop endpoint and on shutdown.
	 * @param trigger what asks for it; only the first call's trigger counts
	 * @return {@code true} if this call ran the sequence, {@code false} if an earlier one
	 * did
	 */
	public boolean runAndWait(Trigger trigger) {
		CompletableFuture<Void> mine = new CompletableFuture<>();
		CompletableFuture<Void> existing = this.run.compareAndExchange(null, mine);
		if (existing != null) {
			existing.join();
			return false;
		}
		try {
			sequence(trigger);
		}
		finally {
			mine.complete(null);
		}
		return true;
	}

	private void sequence(Trigger trigger) {
		this.state = State.DRAINING;
		if (this.lossless != null) {
			this.lossless.close(this.deregisterTimeout);
		}
		boolean registered = this.registrations.stream().anyMatch(AutoRegistration::isRunning)
				&& (this.registrationMetadata == null || this.registrationMetadata.registeredAt() >= 0);
		boolean drains = registered;
		if (registered) {
			log.info("Shutdown: deregistering, then draining for {} ms while still serving", this.drain.toMillis());
			deregister();
			this.deregisteredAt = this.clock.millis();
		}
		else if (!(this.context instanceof WebServerApplicationContext)) {
			log.info("Shutdown: this application is not registered and serves no HTTP; refusing traffic, "
					+ "nothing to drain");
		}
		else if (this.lossless != null && this.lossless.registrationFailed()) {
			log.info("Shutdown: the registration of this instance failed at startup, so nothing routes here; "
					+ "refusing traffic, no drain");
		}
		else if (trigger == Trigger.PRE_STOP || this.onKubernetes) {
			drains = true;
			log.info(
					"Shutdown: this instance is not registered in a registry; refusing traffic, then draining "
							+ "for {} ms while still serving ({})",
					this.drain.toMillis(), (trigger == Trigger.PRE_STOP) ? "started by /actuator/prestop"
							: "running on Kubernetes, which takes the pod out of its endpoints by readiness");
		}
		else {
			log.info("Shutdown: this instance is not registered in a registry, does not run on Kubernetes "
					+ "(spring.main.cloud-platform) and was not taken out by /actuator/prestop; refusing traffic, "
					+ "no drain");
		}
		Timer.Sample drainTime = Timer.start(this.meterRegistry);
		AvailabilityChangeEvent.publish(this.context, ReadinessState.REFUSING_TRAFFIC);
		if (!drains) {
			this.state = State.DRAINED;
			return;
		}
		try {
			this.sleeper.sleep(this.drain);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			log.warn("Shutdown: drain interrupted");
		}
		this.state = State.DRAINED;
		drainTime.stop(this.drainTimer);
		log.info("Shutdown: drain over; stopping the web server gracefully");
	}

	private void deregister() {
		for (AutoRegistration registration : this.registrations) {
			CompletableFuture<Void> stop = CompletableFuture.runAsync(registration::deregister);
			try {
				stop.get(this.deregisterTimeout.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (TimeoutException ex) {
				log.error(
						"Shutdown: the registry did not confirm deregistration within {} ms "
								+ "(atlas.lifecycle.deregister-timeout); continuing",
						this.deregisterTimeout.toMillis());
			}
			catch (ExecutionException ex) {
				log.error("Shutdown: deregistration failed; continuing", ex.getCause());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * Where the sequence is.
	 * @return the state
	 */
	public State state() {
		return this.state;
	}

	/**
	 * When deregistration returned (or gave up).
	 * @return epoch ms, or {@code -1} before the sequence deregistered anything
	 */
	public long deregisteredAt() {
		return this.deregisteredAt;
	}

	/** Where the sequence is. */
	public enum State {

		/** Not shutting down. */
		SERVING,

		/** Deregistered, refusing new traffic, still serving while callers notice. */
		DRAINING,

		/** Drain over; Spring is stopping the web server and the rest. */
		DRAINED

	}

	/** What started the sequence. */
	public enum Trigger {

		/**
		 * The root context is closing: SIGTERM, or {@code close()} (a test's context, an
		 * IDE stopping a local run).
		 */
		CONTEXT_CLOSED,

		/**
		 * The preStop endpoint ({@link PreStopEndpoint}): an orchestrator is taking this
		 * instance out of service.
		 */
		PRE_STOP

	}

	/**
	 * How the sequence waits out the drain. Production uses {@link #THREAD_SLEEP}; tests
	 * pass one that advances a fake clock instead of waiting. Called at most once per
	 * application, on the thread running the sequence.
	 */
	@FunctionalInterface
	public interface Sleeper {

		/** Blocks the calling thread with {@link Thread#sleep(long)}, in milliseconds. */
		Sleeper THREAD_SLEEP = (duration) -> Thread.sleep(duration.toMillis());

		/**
		 * Waits for a duration, on the calling thread.
		 * @param duration how long, not negative
		 * @throws InterruptedException if the thread is interrupted while waiting
		 */
		void sleep(Duration duration) throws InterruptedException;

	}

}
