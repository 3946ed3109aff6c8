package dev.atlas.autoconfigure.registry;

/**
 * A registry that can tell, per service, when its instances change (a Nacos subscription,
 * a ZooKeeper watch on the service's path), so that the cached instance list of that
 * service is evicted at once instead of at its TTL. Unlike Spring Cloud's
 * {@code HeartbeatEvent}, which some registry integrations publish only when the
 * application registers itself (ZooKeeper's) or on a timer (Nacos, Eureka, Consul), a
 * subscription works for every caller. Implementations are beans of the application
 * context; Atlas subscribes once per service, when the service is first called (its
 * load-balancer context is created), and an implementation releases its subscriptions
 * when the application context closes.
 *
 * @since 0.1.0
 */
public interface InstanceChangeSource {

	/**
	 * Subscribes to changes of one service.
	 * @param serviceId the service id
	 * @param onChange run (on a registry client thread) after each change; must be quick
	 * and thread-safe
	 */
	void subscribe(String serviceId, Runnable onChange);

	/**
	 * Whether changes are still delivered once the JVM has begun to shut down (while this
	 * application drains). A registry client that stops its event delivery in a JVM
	 * shutdown hook of its own answers {@code false}; Atlas then refreshes every cached
	 * list periodically during the shutdown ({@link RegistryEventRefresher}).
	 * @return {@code true} (the default) if changes keep coming until the application
	 * context closes the source
	 */
	default boolean deliversDuringShutdown() {
		return true;
	}

	/**
	 * Whether this source's own live view of a service holds no instance, so that an
	 * empty answer from the registry is the truth (the instances deregistered, the
	 * service was scaled to zero) and Atlas's last-known-good list gives way at once
	 * instead of keeping them for {@code atlas.registry.stale-limit}. Called on the
	 * request path, once per new empty answer (at most once a second for the same
	 * answer).
	 * @param serviceId a service subscribed to with {@link #subscribe}
	 * @return {@code false} (the default) when this source cannot tell an outage from an
	 * empty service, e.g. a Nacos client, which pushes an empty list when it resubscribes
	 * after a server restart, before the providers have registered again; then the stale
	 * list is connect-checked instead. Must be quick and must not throw.
	 */
	default boolean confirmsNoInstances(String serviceId) {
		return false;
	}

}
