package dev.atlas.autoconfigure.gray;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * The headers gray routing needs carried across hops ({@link GrayPropagatedHeaders}), for
 * Atlas's propagation, which carries them with the configured ones. On whenever Atlas is
 * enabled, with or without Atlas's load balancer.
 *
 * @since 0.1.0
 */
@AutoConfiguration(beforeName = "dev.atlas.autoconfigure.propagation.AtlasPropagationAutoConfiguration")
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(GrayProperties.class)
public final class AtlasGrayHeadersAutoConfiguration {

	private static final String SERVICES = "atlas.services";

	AtlasGrayHeadersAutoConfiguration() {
	}

	/**
	 * The gray header and the hash-key headers: at startup the configured ones, later
	 * those of the rules in force.
	 * @param gray {@code atlas.gray.*}
	 * @param environment where {@code atlas.services.<id>.gray.hash-key-header} is read
	 * @param settings the rules in force, when Atlas is the load balancer
	 * @return the source
	 */
	@Bean
	GrayPropagatedHeaders atlasGrayPropagatedHeaders(GrayProperties gray, ConfigurableEnvironment environment,
			ObjectProvider<AtlasSettings> settings) {
		List<@Nullable String> names = new ArrayList<>();
		names.add(gray.getHeader());
		names.add(gray.getHashKeyHeader());
		AtlasSettings.binder(environment)
			.bind(SERVICES, Bindable.mapOf(String.class, ServiceGray.class))
			.orElse(Map.of())
			.values()
			.forEach((service) -> names.add(service.getGray().getHashKeyHeader()));
		return new GrayPropagatedHeaders(names, settings);
	}

	/**
	 * The gray section of one service under {@code atlas.services}, bound alone (the
	 * other sections are not read here).
	 */
	static final class ServiceGray {

		private final ServiceGrayProperties gray = new ServiceGrayProperties();

		ServiceGrayProperties getGray() {
			return this.gray;
		}

	}

}
