package dev.atlas.autoconfigure.settings;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Checks shared by the property classes. Stateless.
 *
 * @since 0.1.0
 */
public final class PropertyChecks {

	private PropertyChecks() {
	}

	/**
	 * Requires a duration that is not negative.
	 * @param property the full property name, e.g. {@code atlas.lifecycle.drain}
	 * @param value the bound value
	 * @throws IllegalArgumentException naming the property when {@code value} is
	 * {@code null} or negative
	 */
	public static void requireNonNegative(String property, @Nullable Duration value) {
		if (value == null || value.isNegative()) {
			throw new IllegalArgumentException("Invalid " + property + ": must be a duration >= 0, was " + value);
		}
	}

}
