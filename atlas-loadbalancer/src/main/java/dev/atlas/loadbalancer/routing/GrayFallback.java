package dev.atlas.loadbalancer.routing;

import dev.atlas.loadbalancer.support.PropertyValues;

/**
 * Where a request goes when it wants a tag that no instance carries (e.g. {@code v3}
 * while only {@code v1} and {@code v2} run).
 *
 * @since 0.1.0
 */
public enum GrayFallback {

	/**
	 * To the baseline instances (untagged or tagged with a baseline tag); to all when
	 * there is none.
	 */
	BASELINE("baseline"),

	/** To every instance, whatever its tag. */
	ALL("all"),

	/**
	 * Nowhere: the request gets an empty response (with Atlas's auto-configuration, a
	 * {@code NoInstanceAvailableException} for every HTTP client).
	 */
	NONE("none");

	private final String value;

	GrayFallback(String value) {
		this.value = value;
	}

	/**
	 * The property value.
	 * @return e.g. {@code baseline}
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Parses a property value, ignoring case.
	 * @param value e.g. {@code baseline}
	 * @return the constant
	 * @throws IllegalArgumentException naming the allowed values if {@code value} is none
	 * of them
	 */
	public static GrayFallback fromValue(String value) {
		return PropertyValues.parse(value, values(), GrayFallback::value, "gray fallback");
	}

	@Override
	public String toString() {
		return this.value;
	}

}
