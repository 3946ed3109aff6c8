package dev.atlas.loadbalancer.instance;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Last-known-good instance list: an empty answer from the registry (an outage, a
 * restarted registry node, a failed query) does not wipe a service's instances. The
 * previous non-empty list keeps being used, marked stale (counted in
 * {@code atlas.registry.stale{service}} once per empty refresh, one WARN per episode),
 * until a non-empty answer comes back — or until the empty answers have lasted longer
 * than the stale limit, after which an empty list is accepted, so a real scale to zero is
 * honoured.
 *
 * <p>
 * Thread-safe and lock-free: returns the same list object while nothing changes, so
 * downstream memoization holds.
 */
public final class LastKnownGood {

	private static final Logger log = LoggerFactory.getLogger(LastKnownGood.class);

	/**
	 * Counter of empty refreshes answered with the last known good list; tags
	 * {@code service}.
	 */
	public static final String STALE_METER = "atlas.registry.stale";

	private final String serviceId;

	private final Duration staleLimit;

	private final Clock clock;

	private final Counter stale;

	private volatile @Nullable List<ServiceInstance> lastGood;

	private volatile @Nullable List<ServiceInstance> lastEmpty;

	private volatile long emptySince = -1;

	/**
	 * Creates the guard of one service.
	 * @param serviceId the service
	 * @param staleLimit how long empty answers are overridden, not negative
	 * ({@link Duration#ZERO} accepts empty lists at once)
	 * @param clock measures the stale period
	 * @param meterRegistry where {@value #STALE_METER} is registered
	 */
	public LastKnownGood(String serviceId, Duration staleLimit, Clock clock, MeterRegistry meterRegistry) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		if (staleLimit.isNegative()) {
			throw new IllegalArgumentException("staleLimit must not be negative, was " + staleLimit);
		}
		this.staleLimit = staleLimit;
		this.clock = Objects.requireNonNull(clock, "clock");
		this.stale = Counter.builder(STALE_METER)
			.description("Empty registry answers replaced by the last known good instance list")
			.tag("service", serviceId)
			.register(meterRegistry);
	}

	/**
	 * The list to use for a registry answer.
	 * @param answer as emitted by the supplier below (discovery + cache); not
	 * {@code null}
	 * @return {@code answer} when it is non-empty or when the stale limit has passed,
	 * else the last non-empty answer
	 */
	public List<ServiceInstance> apply(List<ServiceInstance> answer) {
		if (!answer.isEmpty()) {
			if (this.emptySince >= 0) {
				log.info("Service '{}': the registry lists {} instances again; stale list dropped", this.serviceId,
						answer.size());
				this.emptySince = -1;
			}
			if (this.lastGood != answer) {
				this.lastGood = answer;
			}
			return answer;
		}
		List<ServiceInstance> good = this.lastGood;
		if (good == null) {
			return answer;
		}
		long now = this.clock.millis();
		if (this.emptySince < 0) {
			this.emptySince = now;
			log.warn("Service '{}': the registry answered no instance; keeping the last {} known for up to {} ms",
					this.serviceId, good.size(), this.staleLimit.toMillis());
		}
		if (now - this.emptySince >= this.staleLimit.toMillis()) {
			if (this.lastGood != null) {
				log.warn("Service '{}': still no instance after {} ms; accepting the empty list", this.serviceId,
						this.staleLimit.toMillis());
				this.lastGood = null;
			}
			return answer;
		}
		if (this.lastEmpty != answer) {
			this.lastEmpty = answer;
			this.stale.increment();
		}
		return good;
	}

	/**
	 * Whether the last answer was replaced by the last known good list.
	 * @return {@code true} while stale
	 */
	public boolean isStale() {
		return this.emptySince >= 0 && this.lastGood != null;
	}

}
