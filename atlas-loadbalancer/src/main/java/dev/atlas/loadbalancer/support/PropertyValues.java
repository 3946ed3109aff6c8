package dev.atlas.loadbalancer.support;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Parsing of the enumerations whose constants are spelled in properties as
 * {@code kebab-case} values.
 *
 * @since 0.1.0
 */
public final class PropertyValues {

	private PropertyValues() {
	}

	/**
	 * Finds the constant spelled {@code value}, ignoring case, surrounding blanks, and
	 * {@code _} for {@code -}.
	 * @param value the property value, may be {@code null}
	 * @param constants every constant of the enumeration
	 * @param spelling the property spelling of a constant, e.g. {@code weighted-random}
	 * @param what what the value is, for the message, e.g.
	 * {@code "load-balancing strategy"}
	 * @param <E> the enumeration
	 * @return the constant
	 * @throws IllegalArgumentException naming the allowed values if {@code value} is none
	 * of them
	 */
	public static <E extends Enum<E>> E parse(String value, E[] constants, Function<E, String> spelling, String what) {
		String normalized = (value != null) ? value.trim().toLowerCase(Locale.ROOT).replace('_', '-') : "";
		for (E constant : constants) {
			if (spelling.apply(constant).equals(normalized)) {
				return constant;
			}
		}
		String article = ("aeiou".indexOf(what.charAt(0)) >= 0) ? "an " : "a ";
		throw new IllegalArgumentException("'" + value + "' is not " + article + what + "; allowed values: "
				+ Arrays.stream(constants).map(spelling).collect(Collectors.joining(", ")));
	}

}
