package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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
 * Whether the registry lists this application: what {@code /actuator/atlas} reports as
 * {@code registered}.
 *
 * <p>
 * A {@code ServiceRegistry.register} call that returns has not always registered: Spring
 * Cloud Alibaba's with {@code spring.cloud.nacos.discovery.fail-fast=false} logs a WARN
 * and returns when the Nacos server is down, and the Nacos client registers the instance
 * by itself once the server is back, seconds or hours later. So after the registry
 * accepts the registration ({@link #registered}), this asks the application's
 * {@link DiscoveryClient} — the view its callers have — off the request path on one
 * daemon thread, once per {@code interval} (for Nacos and Eureka a read of the client's
 * local copy), until it lists this instance (same host, ignoring case, and port) or the
 * application deregisters. A failing lookup (registry down) counts as not listed yet,
 * logged at DEBUG; a lookup that answers {@code null} (no discovery client to ask) counts
 * as listed. One WARN when the instance is still not listed after {@value #WARN_AFTER_S}
 * s (e.g. a registry that lists only instances with a weight above 0, or a client that
 * does not fetch the registry). Once listed, it is not checked again:
 * {@link Phase#LISTED} means listed since the last registration.
 *
 * <p>
 * Only the first service this application registers is followed (Spring Cloud registers
 * the application, then, for some registries, a separate management service).
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class RegistrationStatus implements DisposableBean {

	/** How long pending before one WARN, in seconds. */
	static final int WARN_AFTER_S = 60;

	private static final Logger log = LoggerFactory.getLogger(RegistrationStatus.class);

	private final Function<String, @Nullable List<ServiceInstance>> lookup;

	private final Clock clock;

	private final Duration interval;

	/** Guards every field below. */
	private final Object lock = new Object();

	private Phase phase = Phase.NOT_REGISTERED;

	private @Nullable String serviceId;

	private long registeredAt = -1;

	private long listedAt = -1;

	/**
	 * Incremented by each registration and deregistration; a check of an older one does
	 * nothing.
	 */
	private long generation;

	private boolean destroyed;

	/** Whether the WARN of the current generation was logged. */
	private boolean warned;

	private @Nullable ScheduledExecutorService checks;

	/** Where this application's registration is. */
	public enum Phase {

		/** Not registered: not yet, or the registry refused. */
		NOT_REGISTERED,

		/** The registry accepted the registration; its listing does not show it yet. */
		PENDING,

		/** The registry listed this instance after its last registration. */
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
	 * The registry accepted a registration of this application (its
	 * {@code ServiceRegistry.register} returned): checks until the registry lists it. A
	 * registration of another service than the first one (a management service) is
	 * ignored; so is one after {@link #destroy()}.
	 * @param self the registration
	 */
	public void registered(ServiceInstance self) {
		long mine;
		synchronized (this.lock) {
			if (this.destroyed || (this.serviceId != null && !this.serviceId.equals(self.getServiceId()))) {
				return;
			}
			this.serviceId = self.getServiceId();
			mine = ++this.generation;
			this.registeredAt = this.clock.millis();
			this.listedAt = -1;
			this.warned = false;
			this.phase = Phase.PENDING;
			if (this.checks == null) {
				CustomizableThreadFactory threads = new CustomizableThreadFactory("atlas-registration-check-");
				threads.setDaemon(true);
				this.checks = Executors.newSingleThreadScheduledExecutor(threads);
			}
		}
		schedule(self, mine, 0);
	}

	/**
	 * This application deregistered its first service: no more checks.
	 * @param self the registration
	 */
	public void deregistered(ServiceInstance self) {
		synchronized (this.lock) {
			if (this.serviceId == null || !this.serviceId.equals(self.getServiceId())) {
				return;
			}
			this.generation++;
			if (this.phase != Phase.NOT_REGISTERED) {
				this.phase = Phase.DEREGISTERED;
			}
		}
	}

	private void schedule(ServiceInstance self, long generation, long delayMs) {
		synchronized (this.lock) {
			if (this.checks != null && generation == this.generation) {
				this.checks.schedule(() -> check(self, generation), delayMs, TimeUnit.MILLISECONDS);
			}
		}
	}

	private void check(ServiceInstance self, long generation) {
		boolean listed;
		try {
			List<ServiceInstance> instances = this.lookup.apply(self.getServiceId());
			listed = instances == null || instances.stream()
				.anyMatch((instance) -> instance.getPort() == self.getPort() && instance.getHost() != null
						&& instance.getHost().equalsIgnoreCase(self.getHost()));
		}
		catch (RuntimeException ex) {
			log.debug("Could not check whether the registry lists this instance yet", ex);
			listed = false;
		}
		synchronized (this.lock) {
			if (generation != this.generation || this.phase != Phase.PENDING) {
				return;
			}
			if (listed) {
				this.phase = Phase.LISTED;
				this.listedAt = this.clock.millis();
				log.info("The registry lists this instance ({} ms after it accepted the registration)",
						this.listedAt - this.registeredAt);
				return;
			}
			long pendingMs = this.clock.millis() - this.registeredAt;
			if (!this.warned && pendingMs >= WARN_AFTER_S * 1000L) {
				this.warned = true;
				log.warn(
						"The registry accepted the registration of '{}' {} s ago but does not list this instance "
								+ "({}:{}) yet; /actuator/atlas reports it PENDING",
						self.getServiceId(), pendingMs / 1000, self.getHost(), self.getPort());
			}
		}
		schedule(self, generation, this.interval.toMillis());
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

	/** Stops checking, for good; idempotent. */
	@Override
	public void destroy() {
		synchronized (this.lock) {
			this.destroyed = true;
			this.generation++;
			if (this.checks != null) {
				this.checks.shutdownNow();
				this.checks = null;
			}
		}
	}

}
