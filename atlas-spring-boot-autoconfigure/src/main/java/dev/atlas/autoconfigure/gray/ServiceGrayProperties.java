package dev.atlas.autoconfigure.gray;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The gray settings of one service, {@code atlas.services.<serviceId>.gray.*}: the lane
 * settings of {@link GrayLaneProperties} (unset ones are {@code atlas.gray.*}) and the
 * service's percentage canary, which only exists per service. The header, the metadata
 * key and the own tag belong to the caller ({@code atlas.gray.*} only). Mutable while
 * being bound, not thread-safe.
 *
 * @since 0.1.0
 */
public class ServiceGrayProperties extends GrayLaneProperties {

	/** Name of {@link #getWeights()} under the section, which is per service only. */
	public static final String WEIGHTS = "weights";

	/**
	 * Percentage canary for requests to this service that want no tag: tag to the
	 * percentage (0..100, adding up to at most 100) of them sent to that tag's instances,
	 * e.g. atlas.services.user-service.gray.weights.v2=10. None by default.
	 */
	private Map<String, Double> weights = new LinkedHashMap<>();

	public Map<String, Double> getWeights() {
		return this.weights;
	}

	public void setWeights(Map<String, Double> weights) {
		this.weights = weights;
	}

}
