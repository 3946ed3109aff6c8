package dev.atlas.autoconfigure.registry;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.PropertyChecks;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How callers follow the registry, {@code atlas.registry.*}: event-driven refresh and
 * last-known-good lists. Mutable while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = RegistryProperties.PREFIX)
public class RegistryProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".registry";

	/**
	 * Whether registry change events (Spring Cloud's HeartbeatEvent, e.g. ZooKeeper's
	 * watch) evict the load balancer's cached instance lists at once, instead of waiting
	 * for their TTL (spring.cloud.loadbalancer.cache.ttl, which stays as a safety net,
	 * measured from write).
	 */
	private boolean refreshOnEvents = true;

	/**
	 * How long an empty registry answer is replaced by the last non-empty instance list
	 * (an outage or a restarted registry node must not wipe the list); after that, an
	 * empty list is accepted. 60s by default; 0 accepts empty lists at once.
	 */
	private Duration staleLimit = Duration.ofSeconds(60);

	/**
	 * Validates the stale limit.
	 * @throws IllegalArgumentException naming the property when it is negative
	 */
	@Override
	public void afterPropertiesSet() {
		PropertyChecks.requireNonNegative(PREFIX + ".stale-limit", this.staleLimit);
	}

	public boolean isRefreshOnEvents() {
		return this.refreshOnEvents;
	}

	public void setRefreshOnEvents(boolean refreshOnEvents) {
		this.refreshOnEvents = refreshOnEvents;
	}

	public Duration getStaleLimit() {
		return this.staleLimit;
	}

	public void setStaleLimit(Duration staleLimit) {
		this.staleLimit = staleLimit;
	}

}
