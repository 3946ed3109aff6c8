package dev.atlas.autoconfigure.loadbalancer;

/**
 * A registry that can tell, per service, when its instances change (e.g. a Nacos
 * subscription), so that the cached instance list of that service is evicted at once
 * instead of at its TTL. Registries that publish Spring Cloud's {@code HeartbeatEvent} on
 * change (ZooKeeper's watch) need none. Implementations are beans of the application
 * context; Atlas subscribes once per service, when the service is first called.
 */
public interface InstanceChangeSource {

	/**
	 * Subscribes to changes of one service.
	 * @param serviceId the service id
	 * @param onChange run (on a registry client thread) after each change; must be quick
	 * and thread-safe
	 */
	void subscribe(String serviceId, Runnable onChange);

}
