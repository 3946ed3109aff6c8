package dev.atlas.loadbalancer.instance;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.kubernetes.commons.discovery.KubernetesServiceInstance;

/**
 * The pod labels a Spring Cloud Kubernetes instance carries: the {@code "labels"} entry
 * of {@link KubernetesServiceInstance#podMetadata()}, which its discovery client (fabric8
 * or the Kubernetes Java client) fills only with
 * {@code spring.cloud.kubernetes.discovery.metadata.add-pod-labels=true}. Nothing here
 * calls the Kubernetes API: only what the instance already holds is read.
 *
 * <p>
 * The only class of Atlas that names a Spring Cloud Kubernetes type.
 * {@link InstanceAttributesParser} calls it only when
 * {@code spring-cloud-kubernetes-commons} (an optional dependency) is on the class path,
 * so without it this class is never loaded.
 */
final class KubernetesPodLabels {

	/** Key of the pod labels in {@link KubernetesServiceInstance#podMetadata()}. */
	static final String LABELS = "labels";

	private KubernetesPodLabels() {
	}

	/**
	 * The pod labels of an instance, as untyped values (read them as objects, as the
	 * metadata is).
	 * @param instance any instance
	 * @return its pod labels; {@code null} when it is no
	 * {@link KubernetesServiceInstance} or carries no pod label
	 */
	static @Nullable Map<?, ?> of(ServiceInstance instance) {
		if (!(instance instanceof KubernetesServiceInstance kubernetes)) {
			return null;
		}
		Map<?, ?> podMetadata = kubernetes.podMetadata();
		if (podMetadata == null) {
			return null;
		}
		Object labels = podMetadata.get(LABELS);
		return (labels instanceof Map<?, ?> map && !map.isEmpty()) ? map : null;
	}

}
