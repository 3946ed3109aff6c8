package dev.atlas.autoconfigure.settings;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;

/**
 * What {@link AtlasSettings#reload()} read: the caller-level settings and what each
 * service's settings would become, nothing of it in force yet. Immutable.
 *
 * @param caller the caller-level settings read, or {@code null} when they are invalid
 * (then every outcome is an error)
 * @param outcomes by service id (the empty id for the global settings), in order
 * @since 0.1.0
 */
public record Reload(@Nullable CallerSettings caller, Map<String, Outcome> outcomes) {

	/**
	 * A message for a rejected value: the property, the value, and what is allowed.
	 * @param ex what resolving threw
	 * @return one line
	 */
	public static String describe(Throwable ex) {
		if (ex instanceof BindException bind) {
			ConfigurationProperty property = bind.getProperty();
			Throwable root = bind;
			while (root.getCause() != null && root.getCause() != root) {
				root = root.getCause();
			}
			String name = (property != null) ? property.getName().toString() : bind.getName().toString();
			String value = (property != null) ? " = '" + property.getValue() + "'" : "";
			return "Invalid " + name + value + ": " + root.getMessage();
		}
		return String.valueOf(ex.getMessage());
	}

	/**
	 * What one service's settings would become.
	 *
	 * @param previous the settings in force
	 * @param next the new settings, or {@code null} when {@code error} is set
	 * @param error why the new settings are invalid, or {@code null}
	 * @since 0.1.0
	 */
	public record Outcome(ServiceSettings previous, @Nullable ServiceSettings next, @Nullable RuntimeException error) {
	}

}
