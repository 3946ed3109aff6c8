package dev.atlas.loadbalancer.spi;

import java.util.Objects;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What a {@link StrategyFactory} is given to create the strategy of one service.
 *
 * @param serviceId the service
 * @param parser reads instance metadata, for lists that are not snapshots yet
 * @param allZeroWeights what to do when every candidate has weight 0
 * @param meterRegistry where the strategy registers its meters (tag them with
 * {@code service})
 * @since 0.1.0
 */
public record StrategySettings(String serviceId, InstanceAttributesParser parser, AllZeroWeightsPolicy allZeroWeights,
		MeterRegistry meterRegistry) {

	/**
	 * Validates.
	 * @throws NullPointerException if a component is {@code null}
	 */
	public StrategySettings {
		Objects.requireNonNull(serviceId, "serviceId");
		Objects.requireNonNull(parser, "parser");
		Objects.requireNonNull(allZeroWeights, "allZeroWeights");
		Objects.requireNonNull(meterRegistry, "meterRegistry");
	}

}
