package dev.atlas.loadbalancer.outlier;

import java.util.Locale;

import dev.atlas.loadbalancer.support.PropertyValues;

/**
 * What an outlier probe does.
 *
 * @since 0.1.0
 */
public enum ProbeType {

	/** A TCP connect to the instance's host and port (the default). */
	TCP,

	/**
	 * An HTTP GET of {@link ProbeRules#path()} on the instance (its scheme, host and
	 * port); any 2xx answer passes. Finds an instance that accepts connections but does
	 * not answer (hung, frozen), which a TCP probe does not.
	 */
	HTTP,

	/** No probe: an ejected instance returns when its ejection time is over. */
	NONE;

	/**
	 * The property spelling.
	 * @return {@code tcp}, {@code http} or {@code none}
	 */
	public String value() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Parses a property value, case-insensitively.
	 * @param value {@code tcp}, {@code http} or {@code none}
	 * @return the type
	 * @throws IllegalArgumentException naming the allowed values
	 */
	public static ProbeType fromValue(String value) {
		return PropertyValues.parse(value, values(), ProbeType::value, "probe type");
	}

	@Override
	public String toString() {
		return value();
	}

}
