package dev.atlas.autoconfigure.affinity;

/**
 * Recognizes a zone that a registry integration puts in Spring Cloud's
 * {@code LoadBalancerZoneConfig} when the application configured none, such as Eureka's
 * {@code defaultZone}: not a zone the application is in, so {@link CallerCluster} treats
 * it as no zone (cluster affinity off) instead of preferring a zone no instance declares.
 * Contributed as a bean by the registry integration; implementations are stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface PlaceholderZone {

	/**
	 * Whether a zone is only the registry's placeholder.
	 * @param zone the zone of {@code LoadBalancerZoneConfig}, as set, not blank
	 * @return {@code true} to treat it as no zone
	 */
	boolean isPlaceholder(String zone);

}
