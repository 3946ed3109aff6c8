package dev.atlas.loadbalancer.routing;

import dev.atlas.loadbalancer.support.PropertyValues;

/**
 * How cluster affinity splits a caller's requests between its own zone and the others.
 *
 * @since 0.1.0
 */
public enum AffinityMode {

	/**
	 * Zone-aware routing as in Envoy ({@link ZoneShares}): keeps as much traffic in the
	 * caller's zone as keeps every provider equally loaded, given how the callers and the
	 * providers are spread over the zones, sends the residual to the zones with spare
	 * capacity, and leaves a zone gradually as its providers fail (overprovisioning
	 * factor 1.4). Needs the callers' spread (the instances of the caller's own service
	 * in the registry); when zone routing is off for a reason {@link ZoneShares.Inactive}
	 * gives (too few providers, callers' zones unknown, ...), the {@link #THRESHOLD}
	 * rules apply, and in outlier detection's panic mode every zone is used.
	 */
	PROPORTIONAL("proportional"),

	/**
	 * All or nothing: the caller's zone only, until fewer than {@code min-instances} or
	 * {@code min-healthy-ratio} of its instances are usable; then every zone.
	 */
	THRESHOLD("threshold"),

	/**
	 * The caller's zone only, while it has one usable instance; every zone only when it
	 * has none (data residency: a request leaves the zone only when it would otherwise
	 * fail).
	 */
	STRICT("strict");

	private final String value;

	AffinityMode(String value) {
		this.value = value;
	}

	/**
	 * The property value.
	 * @return e.g. {@code proportional}
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Parses a property value, ignoring case.
	 * @param value e.g. {@code proportional}
	 * @return the constant
	 * @throws IllegalArgumentException naming the allowed values if {@code value} is none
	 * of them
	 */
	public static AffinityMode fromValue(String value) {
		return PropertyValues.parse(value, values(), AffinityMode::value, "affinity mode");
	}

	@Override
	public String toString() {
		return this.value;
	}

}
