package dev.atlas.autoconfigure.lifecycle;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.Ordered;

/**
 * Lossless offline: the shutdown sequence of this application, run once, on the first of
 * SIGTERM (the root context's {@link ContextClosedEvent}, before any lifecycle bean
 * stops) or a preStop call ({@link #runAndWait()}):
 * <ol>
 * <li>deregister from the registry (every Spring Cloud auto-registration that registered;
 * bounded by {@code atlas.lifecycle.deregister-timeout} when the registry is unreachable:
 * one ERROR, no longer wait);</li>
 * <li>readiness {@code REFUSING_TRAFFIC}, so Kubernetes and health checks stop routing
 * here;</li>
 * <li>drain: wait {@code atlas.lifecycle.drain} while still serving, so callers refresh
 * their instance lists and in-flight calls arrive (skipped when the application was not
 * registered: no caller to wait for);</li>
 * <li>then Spring continues: Spring Boot's graceful web-server shutdown finishes
 * in-flight requests, and the registry client, a plain bean, closes last.</li>
 * </ol>
 * Child contexts (Feign clients, load-balancer clients) publish their own
 * {@code ContextClosedEvent}s to this listener too; they are ignored, so the drain
 * happens once. Spring Cloud Alibaba's own 10 s wait is set to 0 by Atlas, which owns the
 * sequence.
 *
 * <p>
 * Thread-safe; idempotent: concurrent and later calls wait for the first run and do
 * nothing else.
 */
public class GracefulShutdown implements ApplicationListener<ContextClosedEvent>, Ordered {

	private static final Logger log = LoggerFactory.getLogger(GracefulShutdown.class);

	/** Timer of the drain; tags none. */
	public static final String DRAIN_METER = "atlas.lifecycle.drain";

	private final ApplicationContext context;

	private final List<AbstractAutoServiceRegistration<?>> registrations;

	private final Duration drain;

	private final Duration deregisterTimeout;

	private final Timer drainTimer;

	private final AtomicReference<CompletableFuture<Void>> run = new AtomicReference<>();

	private volatile State state = State.SERVING;

	private volatile long deregisteredAt = -1;

	/** Where the sequence is. */
	public enum State {

		/** Not shutting down. */
		SERVING,

		/** Deregistered, refusing new traffic, still serving while callers notice. */
		DRAINING,

		/** Drain over; Spring is stopping the web server and the rest. */
		DRAINED

	}

	/**
	 * Creates the sequence.
	 * @param context the root application context; not {@code null}
	 * @param registrations the auto-registrations to stop; not {@code null}
	 * @param drain wait after deregistration, not negative
	 * @param deregisterTimeout longest wait for the registry to confirm deregistration,
	 * not negative
	 * @param meterRegistry where {@value #DRAIN_METER} is recorded; not {@code null}
	 */
	public GracefulShutdown(ApplicationContext context, List<AbstractAutoServiceRegistration<?>> registrations,
			Duration drain, Duration deregisterTimeout, MeterRegistry meterRegistry) {
		this.context = context;
		this.registrations = registrations;
		this.drain = drain;
		this.deregisterTimeout = deregisterTimeout;
		this.drainTimer = Timer.builder(DRAIN_METER)
			.description("Time spent draining (deregistered, still serving) before the web server stops")
			.register(meterRegistry);
	}

	@Override
	public void onApplicationEvent(ContextClosedEvent event) {
		if (event.getApplicationContext() != this.context) {
			return;
		}
		runAndWait();
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/**
	 * Runs the sequence (deregister, refuse traffic, drain) if it has not run yet, and
	 * returns when the drain is over. Called by the preStop endpoint and on shutdown.
	 * @return {@code true} if this call ran the sequence, {@code false} if an earlier one
	 * did
	 */
	public boolean runAndWait() {
		CompletableFuture<Void> mine = new CompletableFuture<>();
		CompletableFuture<Void> existing = this.run.compareAndExchange(null, mine);
		if (existing != null) {
			existing.join();
			return false;
		}
		try {
			sequence();
		}
		finally {
			mine.complete(null);
		}
		return true;
	}

	private void sequence() {
		long start = System.nanoTime();
		boolean registered = this.registrations.stream().anyMatch(AbstractAutoServiceRegistration::isRunning);
		this.state = State.DRAINING;
		if (registered) {
			log.info("Shutdown: deregistering, then draining for {} ms while still serving", this.drain.toMillis());
			deregister();
			this.deregisteredAt = System.currentTimeMillis();
		}
		AvailabilityChangeEvent.publish(this.context, ReadinessState.REFUSING_TRAFFIC);
		if (!registered) {
			log.info("Shutdown: this instance is not registered, nothing to drain");
			this.state = State.DRAINED;
			return;
		}
		try {
			Thread.sleep(this.drain.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			log.warn("Shutdown: drain interrupted");
		}
		this.state = State.DRAINED;
		this.drainTimer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
		log.info("Shutdown: drain over; stopping the web server gracefully");
	}

	private void deregister() {
		for (AbstractAutoServiceRegistration<?> registration : this.registrations) {
			CompletableFuture<Void> stop = CompletableFuture.runAsync(registration::stop);
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
	 * @return never {@code null}
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

}
