package dev.atlas.autoconfigure.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.SmartApplicationListener;

/**
 * Lossless online: holds back the application's auto-registration (Nacos, ZooKeeper,
 * Consul, … — anything built on Spring Cloud's {@code AbstractAutoServiceRegistration} —
 * and Eureka's; see {@link AutoRegistration}) until the application is ready and
 * accepting traffic, instead of registering as soon as the web server is up (before
 * runners and warm-up code ran).
 *
 * <p>
 * Spring Cloud registers when the auto-registration receives the
 * {@link WebServerInitializedEvent}; Atlas intercepts that call ({@link #defer}) and
 * replays it once readiness turns {@link ReadinessState#ACCEPTING_TRAFFIC} (published by
 * Spring Boot after every runner), after the optional
 * {@code atlas.lifecycle.register-delay}. If startup fails, readiness never turns, and
 * the application is never registered. ({@link RegistrationMetadata} stamps
 * {@code atlas.registered-at} on the registration when it finally happens.)
 *
 * <p>
 * A registration that fails keeps the registry's own failure semantics: the exception
 * goes on to whoever published readiness, so the application fails to start exactly as it
 * would have without Atlas (Spring Cloud Alibaba's default
 * {@code spring.cloud.nacos.discovery.fail-fast=true}, ZooKeeper); a registry that only
 * logs its failure (Nacos with {@code fail-fast=false}) returns normally and may register
 * later by itself, which {@link RegistrationStatus} notices. After
 * {@code atlas.lifecycle.register-delay} no one waits for the result, so a failure there
 * turns liveness {@code BROKEN} and closes the application context instead (one ERROR):
 * the JVM then ends when its last non-daemon thread does, with exit code 0, unlike a
 * failed {@code SpringApplication.run} (exit code 1).
 *
 * <p>
 * Once shutdown has begun ({@link #close(Duration)}: called first by the shutdown
 * sequence, on SIGTERM or preStop, and on the root context's {@link ContextClosedEvent}
 * when Atlas's sequence is off), nothing registers any more: a registration waiting for
 * readiness or for the delay is dropped, later calls do nothing, and a registration
 * already under way is waited for, so that the deregistration that follows comes after
 * it. A registration that outlasts that wait deregisters itself as soon as it returns.
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class LosslessRegistration implements SmartApplicationListener {

	private static final Logger log = LoggerFactory.getLogger(LosslessRegistration.class);

	private final ApplicationContext context;

	private final Duration delay;

	private final Scheduler scheduler;

	/** Guards every field below. */
	private final Object lock = new Object();

	private final List<Deferred> deferred = new ArrayList<>();

	/**
	 * The registrations that wait for {@code atlas.lifecycle.register-delay}; the delayed
	 * task takes them when it starts, so that {@link #close} knows whether it dropped
	 * them or they are under way ({@link Future#cancel} cannot tell: it answers
	 * {@code true} for a task already running too).
	 */
	private List<Deferred> delayed = List.of();

	private @Nullable Future<?> pending;

	private int registering;

	private boolean closed;

	/** Set when {@link #close} stopped waiting for a registration under way. */
	private boolean abandoned;

	private volatile boolean ready;

	private volatile boolean registrationFailed;

	/**
	 * Creates the coordinator.
	 * @param context the root application context, whose {@link ContextClosedEvent}
	 * closes this coordinator (those of child contexts are ignored)
	 * @param delay extra wait after readiness, not negative
	 * @param scheduler runs the registration after {@code delay} when it is not zero
	 */
	public LosslessRegistration(ApplicationContext context, Duration delay, Scheduler scheduler) {
		this.context = context;
		this.delay = delay;
		this.scheduler = scheduler;
	}

	/**
	 * Called instead of the auto-registration's
	 * {@code onApplicationEvent(WebServerInitializedEvent)}: runs it at once if the
	 * application is already ready, else when it becomes ready; never once shutdown has
	 * begun.
	 * @param target the auto-registration
	 * @param event the web server event
	 * @throws RuntimeException what the registration threw when it ran at once
	 */
	public void defer(AutoRegistration target, WebServerInitializedEvent event) {
		synchronized (this.lock) {
			if (this.closed) {
				log.info("Not registering this instance: shutdown has begun");
				return;
			}
			if (!this.ready) {
				this.deferred.add(new Deferred(target, event));
				log.info("Registration of this instance is held back until the application is ready "
						+ "(atlas.lifecycle.register-when-ready=true)");
				return;
			}
		}
		registerOrFail(List.of(new Deferred(target, event)));
	}

	@Override
	public boolean supportsEventType(Class<? extends ApplicationEvent> eventType) {
		return AvailabilityChangeEvent.class.isAssignableFrom(eventType)
				|| ContextClosedEvent.class.isAssignableFrom(eventType);
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event instanceof ContextClosedEvent closedEvent) {
			if (closedEvent.getApplicationContext() == this.context) {
				close(Duration.ZERO);
			}
			return;
		}
		if (!(event instanceof AvailabilityChangeEvent<?> availability)
				|| availability.getState() != ReadinessState.ACCEPTING_TRAFFIC) {
			return;
		}
		List<Deferred> toRegister;
		synchronized (this.lock) {
			if (this.ready || this.closed) {
				return;
			}
			this.ready = true;
			toRegister = new ArrayList<>(this.deferred);
			this.deferred.clear();
			if (toRegister.isEmpty()) {
				return;
			}
			if (!this.delay.isZero()) {
				log.info("Application ready; registering in {} ms (atlas.lifecycle.register-delay)",
						this.delay.toMillis());
				this.delayed = toRegister;
				this.pending = this.scheduler.schedule(this::registerDelayed, this.delay);
				return;
			}
		}
		registerOrFail(toRegister);
	}

	/**
	 * Registers on the caller's thread (the readiness event, inside
	 * {@code SpringApplication.run}); a failure is remembered
	 * ({@link #registrationFailed()}) and thrown on.
	 */
	private void registerOrFail(List<Deferred> toRegister) {
		try {
			register(toRegister);
		}
		catch (RuntimeException ex) {
			this.registrationFailed = true;
			throw ex;
		}
	}

	/**
	 * Shutdown has begun: from now on nothing registers. Drops a registration that waits
	 * for readiness or for {@code atlas.lifecycle.register-delay}, then waits up to
	 * {@code wait} for a registration under way to return, so that a deregistration after
	 * this call finds it registered; one that returns later deregisters itself at once.
	 * Idempotent.
	 * @param wait longest wait for a registration under way, not negative; real time
	 */
	public void close(Duration wait) {
		synchronized (this.lock) {
			if (!this.closed) {
				this.closed = true;
				boolean dropped = !this.deferred.isEmpty() || !this.delayed.isEmpty();
				this.deferred.clear();
				this.delayed = List.of();
				if (this.pending != null) {
					this.pending.cancel(false);
				}
				if (dropped) {
					log.info("Shutdown has begun: the pending registration of this instance is cancelled");
				}
			}
			long deadline = System.nanoTime() + wait.toNanos();
			while (this.registering > 0) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					this.abandoned = true;
					log.warn("Shutdown has begun while this instance is registering; it deregisters "
							+ "as soon as the registration returns");
					return;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.lock, left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					this.abandoned = true;
					return;
				}
			}
		}
	}

	private void registerDelayed() {
		List<Deferred> toRegister;
		synchronized (this.lock) {
			toRegister = this.delayed;
			this.delayed = List.of();
		}
		try {
			register(toRegister);
		}
		catch (RuntimeException ex) {
			log.error(
					"Registration after atlas.lifecycle.register-delay failed; liveness BROKEN, closing the application, "
							+ "as a failed registration at startup would have",
					ex);
			AvailabilityChangeEvent.publish(this.context, LivenessState.BROKEN);
			if (this.context instanceof ConfigurableApplicationContext closable) {
				closable.close();
			}
		}
	}

	/**
	 * Registers, one auto-registration after the other.
	 * @throws RuntimeException what a registration threw, unchanged (the rest are not
	 * registered)
	 */
	private void register(List<Deferred> toRegister) {
		for (Deferred call : toRegister) {
			synchronized (this.lock) {
				if (this.closed) {
					log.info("Not registering this instance: shutdown has begun");
					return;
				}
				this.registering++;
			}
			boolean deregister;
			try {
				call.target.register(call.event);
				log.info("Registered this instance after it became ready");
			}
			finally {
				synchronized (this.lock) {
					this.registering--;
					deregister = this.abandoned;
					this.lock.notifyAll();
				}
			}
			if (deregister) {
				deregisterLate(call.target);
			}
		}
	}

	private static void deregisterLate(AutoRegistration target) {
		try {
			target.deregister();
			log.warn("Deregistered this instance: its registration returned after shutdown had begun");
		}
		catch (RuntimeException ex) {
			log.error("Deregistration of a registration that returned after shutdown had begun failed", ex);
		}
	}

	/**
	 * Whether an auto-registration's own {@code SmartLifecycle.start()} must not register
	 * now: in a web application, until readiness (the web server's event is replayed
	 * then), while {@code atlas.lifecycle.register-delay} runs (a configuration refresh
	 * restarts Eureka's auto-registration), and once shutdown has begun. A non-web
	 * application has no web server event to replay, so its lifecycle start registers as
	 * it would without Atlas.
	 * @return {@code true} to skip the start
	 */
	public boolean holdsLifecycleStart() {
		if (!(this.context instanceof WebServerApplicationContext)) {
			return false;
		}
		synchronized (this.lock) {
			return !this.ready || this.closed || !this.delayed.isEmpty();
		}
	}

	/**
	 * Whether readiness turned {@code ACCEPTING_TRAFFIC}.
	 * @return {@code true} once ready
	 */
	public boolean isReady() {
		return this.ready;
	}

	/**
	 * Whether a registration at readiness threw (the registry refused it): the
	 * application is failing to start and was never routed to. A registration that fails
	 * after {@code atlas.lifecycle.register-delay} does not count: the application was
	 * ready, and on Kubernetes in the Service's endpoints, for the whole delay.
	 * @return {@code true} once a registration at readiness failed
	 */
	public boolean registrationFailed() {
		return this.registrationFailed;
	}

	/**
	 * Runs the delayed registration. Production uses {@link #DELAYED_EXECUTOR}; tests
	 * pass one that only records the task, and run it when they choose.
	 */
	@FunctionalInterface
	public interface Scheduler {

		/**
		 * Runs the task on the common fork-join pool after the delay
		 * ({@link CompletableFuture#delayedExecutor}); cancelling the returned future
		 * before then keeps the task from running.
		 */
		Scheduler DELAYED_EXECUTOR = (task, delay) -> CompletableFuture.runAsync(task,
				CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS));

		/**
		 * Runs a task once, after a delay, on another thread.
		 * @param task what to run
		 * @param delay how long to wait first, positive
		 * @return a future whose {@code cancel} keeps the task from starting if it has
		 * not yet
		 */
		Future<?> schedule(Runnable task, Duration delay);

	}

	private record Deferred(AutoRegistration target, WebServerInitializedEvent event) {
	}

}
