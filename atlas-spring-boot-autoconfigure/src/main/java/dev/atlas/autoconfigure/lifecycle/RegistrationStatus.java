package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Whether the registry really lists this application: what {@code /actuator/atlas}
 * reports as {@code registered}.
 *
 * <p>
 * A {@code ServiceRegistry.register} call that returns has not always registered: Spring
 * Cloud Alibaba's with {@code spring.cloud.nacos.discovery.fail-fast=false} logs a WARN
 * and returns when the Nacos server is down, and the Nacos client registers the instance
 * by itself once the server is back, seconds or hours later. So after the registry
 * accepts the registration ({@link #registered}), this asks the application's
 * {@link DiscoveryClient} — the view its callers have — once per {@code interval}, off
 * the request path on one daemon thread, until it lists this instance (same host,
 * ignoring case, and port) or the application deregisters. A failing lookup (registry
 * down) counts as not listed yet, logged at DEBUG; a lookup that answers {@code null} (no
 * discovery client to ask) counts as listed.
 *
 * <p>
 * Thread-safe.
 */
public class RegistrationStatus implements DisposableBean {

	private static final Logger log = LoggerFactory.getLogger(RegistrationStatus.class);

	private final Function<String, @Nullable List<ServiceInstance>> lookup;

	private final Clock clock;

	private final Duration interval;

	/** Guards every field below. */
	private final Object lock = new Object();

	private Phase phase = Phase.NOT_REGISTERED;

	private long registeredAt = -1;

	private long listedAt = -1;

	private @Nullable ScheduledExecutorService checks;

	private @Nullable ScheduledFuture<?> check;

	/** Where this application's registration is. */
	public enum Phase {

		/** Not registered: not yet, or the registry refused. */
		NOT_REGISTERED,

		/** The registry accepted the registration; its listing does not show it yet. */
		PENDING,

		/** The registry lists this instance. */
		LISTED,

		/** Deregistered. */
		DEREGISTERED

	}

	/**
	 * Creates the status.
	 * @param lookup the instances the registry lists for a service id, usually
	 * {@link DiscoveryClient#getInstances}; may throw when the registry is unreachable,
	 * and answer {@code null} when there is no discovery client to ask (then an accepted
	 * registration counts as listed)
	 * @param clock source of the times reported
	 * @param interval time between two checks while pending, positive
	 */
	public RegistrationStatus(Function<String, @Nullable List<ServiceInstance>> lookup, Clock clock,
			Duration interval) {
		this.lookup = lookup;
		this.clock = clock;
		this.interval = interval;
	}

	/**
	 * The registry accepted this application's registration (its
	 * {@code ServiceRegistry.register} returned): checks until the registry lists it.
	 * @param self the registration
	 */
	public void registered(ServiceInstance self) {
		synchronized (this.lock) {
			cancelCheck();
			this.registeredAt = this.clock.millis();
			this.listedAt = -1;
			this.phase = Phase.PENDING;
			if (this.checks == null) {
				CustomizableThreadFactory threads = new CustomizableThreadFactory("atlas-registration-check-");
				threads.setDaemon(true);
				this.checks = Executors.newSingleThreadScheduledExecutor(threads);
			}
			this.check = this.checks.scheduleWithFixedDelay(() -> check(self), 0, this.interval.toMillis(),
					TimeUnit.MILLISECONDS);
		}
	}

	/** This application deregistered: no more checks. */
	public void deregistered() {
		synchronized (this.lock) {
			cancelCheck();
			if (this.phase != Phase.NOT_REGISTERED) {
				this.phase = Phase.DEREGISTERED;
			}
		}
	}

	private void check(ServiceInstance self) {
		boolean listed;
		try {
			List<ServiceInstance> instances = this.lookup.apply(self.getServiceId());
			listed = instances == null || instances.stream()
				.anyMatch((instance) -> instance.getPort() == self.getPort() && instance.getHost() != null
						&& instance.getHost().equalsIgnoreCase(self.getHost()));
		}
		catch (RuntimeException ex) {
			log.debug("Could not check whether the registry lists this instance yet", ex);
			return;
		}
		if (listed) {
			synchronized (this.lock) {
				if (this.phase == Phase.PENDING) {
					listed();
					cancelCheck();
				}
			}
		}
	}

	/** Caller holds the lock. */
	private void listed() {
		this.phase = Phase.LISTED;
		this.listedAt = this.clock.millis();
		log.info("The registry lists this instance ({} ms after it accepted the registration)",
				this.listedAt - this.registeredAt);
	}

	/** Caller holds the lock. */
	private void cancelCheck() {
		if (this.check != null) {
			this.check.cancel(false);
			this.check = null;
		}
	}

	/**
	 * Where the registration is.
	 * @return the phase
	 */
	public Phase phase() {
		synchronized (this.lock) {
			return this.phase;
		}
	}

	/**
	 * When the registry first listed this instance after its last registration.
	 * @return epoch ms, or {@code -1} while not listed
	 */
	public long listedAt() {
		synchronized (this.lock) {
			return this.listedAt;
		}
	}

	/** Stops checking; idempotent. */
	@Override
	public void destroy() {
		synchronized (this.lock) {
			cancelCheck();
			if (this.checks != null) {
				this.checks.shutdownNow();
				this.checks = null;
			}
		}
	}

}
