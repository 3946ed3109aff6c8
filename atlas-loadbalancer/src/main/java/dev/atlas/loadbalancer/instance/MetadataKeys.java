package dev.atlas.loadbalancer.instance;

/**
 * Metadata keys Atlas reads from a {@code ServiceInstance}, and the Kubernetes pod label
 * it reads after them. When several keys can carry one attribute, the first one present
 * wins, in the order listed here.
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
	 * Zone as a Kubernetes pod label (the well-known label
	 * {@code topology.kubernetes.io/zone}), read when neither {@link #NACOS_CLUSTER} nor
	 * {@link #ZONE} is in the metadata. It is not a metadata key: Atlas reads it from the
	 * pod labels a Spring Cloud Kubernetes {@code KubernetesServiceInstance} carries in
	 * {@code podMetadata()} under {@code "labels"}, which its discovery client fills only
	 * with {@code spring.cloud.kubernetes.discovery.metadata.add-pod-labels=true}.
	 * Kubernetes itself puts this label on nodes, not on pods: a pod carries it only when
	 * its manifest (or an admission webhook) sets it. A pod label named {@code zone}
	 * needs no such lookup: Spring Cloud Kubernetes (since 3.3.2 and 5.0.2) copies it
	 * into the {@link #ZONE} metadata.
	 */
	public static final String KUBERNETES_ZONE_LABEL = "topology.kubernetes.io/zone";

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
