package dev.atlas.autoconfigure.settings;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.PropertySource;

/**
 * Reads one property from one property source as Spring Boot's binder would (relaxed
 * names: {@code retryableStatusCodes} for {@code retryable-status-codes}, environment
 * variables), not from the whole environment: for deciding what one source sets.
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class SourceValues {

	private SourceValues() {
	}

	/**
	 * The value a property source gives a property.
	 * @param source a property source, read through Spring Boot's adapters
	 * @param name the property, in its canonical form
	 * @return the value, or {@code null} when the source does not set it
	 */
	public static @Nullable Object find(PropertySource<?> source, ConfigurationPropertyName name) {
		for (ConfigurationPropertySource adapted : ConfigurationPropertySources.from(source)) {
			ConfigurationProperty property = adapted.getConfigurationProperty(name);
			if (property != null && property.getValue() != null) {
				return property.getValue();
			}
		}
		return null;
	}

}
