package dev.atlas.loadbalancer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.kubernetes.commons.discovery.DefaultKubernetesServiceInstance;

/** Builders of real {@link ServiceInstance}s for tests. */
public final class TestInstances {

	public static final String SERVICE = "user-service";

	private TestInstances() {
	}

	/** An instance with the given metadata, as key/value pairs. */
	public static ServiceInstance instance(String id, String... keyValues) {
		Map<String, String> metadata = new HashMap<>();
		for (int i = 0; i < keyValues.length; i += 2) {
			metadata.put(keyValues[i], keyValues[i + 1]);
		}
		return new DefaultServiceInstance(id, SERVICE, id + ".local", 8080, false, metadata);
	}

	/**
	 * A real Spring Cloud Kubernetes instance as its discovery client builds it
	 * ({@code DiscoveryClientUtils.serviceInstance}): the metadata it always writes
	 * ({@code k8s_namespace}, {@code type}, the port) plus the given pairs, and the given
	 * pod labels under {@code podMetadata().get("labels")}, which it fills with
	 * {@code add-pod-labels=true} (none: an empty pod metadata, as without it).
	 */
	public static DefaultKubernetesServiceInstance kubernetes(String id, Map<String, String> podLabels,
			String... keyValues) {
		Map<String, String> metadata = new HashMap<>();
		metadata.put("k8s_namespace", "default");
		metadata.put("type", "ClusterIP");
		metadata.put("port.http", "8080");
		for (int i = 0; i < keyValues.length; i += 2) {
			metadata.put(keyValues[i], keyValues[i + 1]);
		}
		Map<String, Map<String, String>> podMetadata = podLabels.isEmpty() ? Map.of() : Map.of("labels", podLabels);
		return new DefaultKubernetesServiceInstance(id, SERVICE, id + ".local", 8080, metadata, false, "default", null,
				podMetadata);
	}

	/** An instance with {@code weight} metadata. */
	public static ServiceInstance weighted(String id, String weight) {
		return instance(id, "weight", weight);
	}

	/** Counts picks per instance id. */
	public static Map<String, Integer> count(List<ServiceInstance> picks) {
		Map<String, Integer> counts = new HashMap<>();
		for (ServiceInstance pick : picks) {
			counts.merge(pick.getInstanceId(), 1, Integer::sum);
		}
		return counts;
	}

	/** {@code n} instances named {@code i0..i(n-1)} with weight 1. */
	public static List<ServiceInstance> fleet(int n) {
		List<ServiceInstance> fleet = new ArrayList<>(n);
		for (int i = 0; i < n; i++) {
			fleet.add(weighted("i" + i, "1"));
		}
		return fleet;
	}

}
