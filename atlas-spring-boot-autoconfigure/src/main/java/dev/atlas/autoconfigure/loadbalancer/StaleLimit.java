package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;
import java.util.Objects;

import dev.atlas.autoconfigure.registry.RegistryProperties;

/**
 * How long empty registry answers are overridden by the last non-empty list
 * ({@code atlas.registry.stale-limit}), as it was when the application context started:
 * the property is read only at startup, and a later rebind of {@link RegistryProperties}
 * (Spring Cloud's refresh) does not change it. Immutable, thread-safe.
 *
 * @param duration not negative
 */
record StaleLimit(Duration duration) {

	StaleLimit {
		Objects.requireNonNull(duration, "duration");
	}

	/**
	 * The stale limit as bound now.
	 * @param registry {@code atlas.registry.*}, validated
	 * @return the limit
	 */
	static StaleLimit of(RegistryProperties registry) {
		return new StaleLimit(registry.getStaleLimit());
	}

}
