package dev.atlas.loadbalancer.routing;

import java.util.Map;
import java.util.Objects;

/**
 * How the callers of a service are spread over the zones: the instances of the caller's
 * own service in the registry, counted per zone ({@link AffinityMode#PROPORTIONAL} reads
 * it to know its share of the demand in each zone).
 *
 * @param perZone the number of callers per zone name (lower-cased); not {@code null},
 * counts {@code > 0}; copied
 * @param withoutZone the callers listed without any zone metadata (not in
 * {@code perZone}: their demand is not attributed to a zone), {@code >= 0}
 * @since 0.1.0
 */
public record CallerZones(Map<String, Integer> perZone, int withoutZone) {

	/**
	 * Validates and copies.
	 * @throws IllegalArgumentException if a count is not positive or {@code withoutZone}
	 * is negative
	 */
	public CallerZones {
		perZone = Map.copyOf(Objects.requireNonNull(perZone, "perZone"));
		if (perZone.values().stream().anyMatch((count) -> count <= 0) || withoutZone < 0) {
			throw new IllegalArgumentException("invalid caller counts " + perZone + ", without zone " + withoutZone);
		}
	}

	/**
	 * The callers in one zone.
	 * @param zone the zone, lower-cased
	 * @return {@code >= 0}
	 */
	public int callers(String zone) {
		return this.perZone.getOrDefault(zone, 0);
	}

}
