package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.routing.GrayFallback;

import org.springframework.core.convert.converter.Converter;

/**
 * Property converters for Atlas's enumerations: they accept the documented spelling
 * ({@code smooth-round-robin}), case-insensitively, and reject anything else with a
 * message that lists the allowed values (Spring Boot's failure report adds the property
 * name and origin).
 */
final class AtlasValueConverters {

	private AtlasValueConverters() {
	}

	/** {@code String} to {@link AllZeroWeightsPolicy}. */
	static final class ToAllZeroWeightsPolicy implements Converter<String, AllZeroWeightsPolicy> {

		@Override
		public AllZeroWeightsPolicy convert(String source) {
			return AllZeroWeightsPolicy.fromValue(source);
		}

	}

	/** {@code String} to {@link GrayFallback}. */
	static final class ToGrayFallback implements Converter<String, GrayFallback> {

		@Override
		public GrayFallback convert(String source) {
			return GrayFallback.fromValue(source);
		}

	}

}
