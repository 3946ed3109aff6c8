package dev.atlas.loadbalancer.instance;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The key by which Atlas recognises an instance across refreshes, when the registry
 * client hands out new objects for it: its instance id, else {@code host:port}. Used by
 * per-instance state that outlives a snapshot (warmup's first-seen times, request
 * statistics).
 */
public final class InstanceKey {

	private InstanceKey() {
	}

	/**
	 * The key of an instance.
	 * @param instance an instance
	 * @return its instance id, else {@code host:port} (allocates only for an instance
	 * without an id)
	 */
	public static String of(ServiceInstance instance) {
		String id = instance.getInstanceId();
		return (id != null) ? id : instance.getHost() + ':' + instance.getPort();
	}

}
