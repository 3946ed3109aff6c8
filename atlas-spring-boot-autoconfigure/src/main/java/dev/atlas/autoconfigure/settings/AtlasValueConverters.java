package dev.atlas.autoconfigure.settings;

import dev.atlas.loadbalancer.outlier.ProbeType;
import dev.atlas.loadbalancer.routing.AffinityMode;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;

import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.convert.ConversionService;
import org.springframework.core.convert.converter.Converter;

/**
 * Property converters for Atlas's enumerations: they accept the documented spelling
 * ({@code fail-open}), case-insensitively, and reject anything else with a message that
 * lists the allowed values (Spring Boot's failure report adds the property name and
 * origin). Registered as {@code @ConfigurationPropertiesBinding} beans by the
 * auto-configuration, and used by {@link AtlasSettings}' own binder. Stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
public final class AtlasValueConverters {

	private AtlasValueConverters() {
	}

	/**
	 * A conversion service with Spring Boot's application converters and Atlas's.
	 * @return a new conversion service
	 */
	public static ConversionService conversionService() {
		ApplicationConversionService conversion = new ApplicationConversionService();
		conversion.addConverter(new ToAffinityMode());
		conversion.addConverter(new ToAllZeroWeightsPolicy());
		conversion.addConverter(new ToGrayFallback());
		conversion.addConverter(new ToProbeType());
		return conversion;
	}

	/** {@code String} to {@link AffinityMode}. */
	public static final class ToAffinityMode implements Converter<String, AffinityMode> {

		/**
		 * Converts a property value.
		 * @throws IllegalArgumentException naming the allowed values
		 */
		@Override
		public AffinityMode convert(String source) {
			return AffinityMode.fromValue(source);
		}

	}

	/** {@code String} to {@link AllZeroWeightsPolicy}. */
	public static final class ToAllZeroWeightsPolicy implements Converter<String, AllZeroWeightsPolicy> {

		/**
		 * Converts a property value.
		 * @throws IllegalArgumentException naming the allowed values
		 */
		@Override
		public AllZeroWeightsPolicy convert(String source) {
			return AllZeroWeightsPolicy.fromValue(source);
		}

	}

	/** {@code String} to {@link GrayFallback}. */
	public static final class ToGrayFallback implements Converter<String, GrayFallback> {

		/**
		 * Converts a property value.
		 * @throws IllegalArgumentException naming the allowed values
		 */
		@Override
		public GrayFallback convert(String source) {
			return GrayFallback.fromValue(source);
		}

	}

	/** {@code String} to {@link ProbeType}. */
	public static final class ToProbeType implements Converter<String, ProbeType> {

		/**
		 * Converts a property value.
		 * @throws IllegalArgumentException naming the allowed values
		 */
		@Override
		public ProbeType convert(String source) {
			return ProbeType.fromValue(source);
		}

	}

}
