package dev.atlas.loadbalancer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

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
