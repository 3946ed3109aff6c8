package dev.atlas.autoconfigure.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.context.ApplicationListener;

/**
 * Lossless online: holds back Spring Cloud's auto-registration (Nacos, ZooKeeper, Consul,
 * … — anything built on {@link AbstractAutoServiceRegistration}) until the application is
 * ready and accepting traffic, instead of registering as soon as the web server is up
 * (before runners and warm-up code ran).
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
 * Thread-safe.
 */
public class LosslessRegistration implements ApplicationListener<AvailabilityChangeEvent<?>> {

	private static final Logger log = LoggerFactory.getLogger(LosslessRegistration.class);

	private final List<Deferred> deferred = new ArrayList<>();

	private final Duration delay;

	private volatile boolean ready;

	/**
	 * Creates the coordinator.
	 * @param delay extra wait after readiness, not negative
	 */
	public LosslessRegistration(Duration delay) {
		this.delay = delay;
	}

	/**
	 * Called instead of the auto-registration's
	 * {@code onApplicationEvent(WebServerInitializedEvent)}: runs it at once if the
	 * application is already ready, else when it becomes ready.
	 * @param target the auto-registration
	 * @param event the web server event
	 */
	public void defer(AbstractAutoServiceRegistration<?> target, WebServerInitializedEvent event) {
		boolean now;
		synchronized (this.deferred) {
			now = this.ready;
			if (!now) {
				this.deferred.add(new Deferred(target, event));
				log.info("Registration of this instance is held back until the application is ready "
						+ "(atlas.lifecycle.register-when-ready=true)");
			}
		}
		if (now) {
			register(List.of(new Deferred(target, event)));
		}
	}

	@Override
	public void onApplicationEvent(AvailabilityChangeEvent<?> event) {
		if (event.getState() != ReadinessState.ACCEPTING_TRAFFIC) {
			return;
		}
		List<Deferred> toRegister;
		synchronized (this.deferred) {
			if (this.ready) {
				return;
			}
			this.ready = true;
			toRegister = new ArrayList<>(this.deferred);
			this.deferred.clear();
		}
		if (toRegister.isEmpty()) {
			return;
		}
		if (this.delay.isZero()) {
			register(toRegister);
		}
		else {
			log.info("Application ready; registering in {} ms (atlas.lifecycle.register-delay)", this.delay.toMillis());
			CompletableFuture.runAsync(() -> register(toRegister),
					CompletableFuture.delayedExecutor(this.delay.toMillis(), TimeUnit.MILLISECONDS));
		}
	}

	private void register(List<Deferred> toRegister) {
		for (Deferred call : toRegister) {
			try {
				call.target.onApplicationEvent(call.event);
				log.info("Registered this instance after it became ready");
			}
			catch (RuntimeException ex) {
				log.error("Registration after readiness failed", ex);
			}
		}
	}

	/**
	 * Whether readiness turned {@code ACCEPTING_TRAFFIC}.
	 * @return {@code true} once ready
	 */
	public boolean isReady() {
		return this.ready;
	}

	private record Deferred(AbstractAutoServiceRegistration<?> target, WebServerInitializedEvent event) {
	}

}
