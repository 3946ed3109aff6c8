package dev.atlas.loadbalancer.instance;

/**
 * Metadata keys Atlas reads from a {@code ServiceInstance}. When several keys can carry
 * one attribute, the first one present wins, in the order listed here.
 *
 * @since 0.1.0
 */
public final class MetadataKeys {

	/**
	 * Weight as a float, written by Spring Cloud Alibaba's Nacos discovery (e.g.
	 * {@code "6.0"}).
	 */
	public static final String NACOS_WEIGHT = "nacos.weight";

	/**
	 * Weight as an int or float, for any other registry (e.g. {@code "6"} or
	 * {@code "0.5"}).
	 */
	public static final String WEIGHT = "weight";

	/** Cluster name, written by Spring Cloud Alibaba's Nacos discovery. */
	public static final String NACOS_CLUSTER = "nacos.cluster";

	/** Zone, the Spring Cloud LoadBalancer convention for any other registry. */
	public static final String ZONE = "zone";

	/**
	 * Health flag written by Spring Cloud Alibaba's Nacos discovery
	 * ({@code "true"}/{@code "false"}).
	 */
	public static final String NACOS_HEALTHY = "nacos.healthy";

	/** Default key of the gray tag. */
	public static final String DEFAULT_TAG = "version";

	/**
	 * Registration time in epoch milliseconds, written by Atlas when the instance
	 * registers.
	 */
	public static final String REGISTERED_AT = "atlas.registered-at";

	private MetadataKeys() {
	}

}
