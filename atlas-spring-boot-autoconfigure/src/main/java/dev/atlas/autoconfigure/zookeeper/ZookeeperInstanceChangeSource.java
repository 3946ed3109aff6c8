package dev.atlas.autoconfigure.zookeeper;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import dev.atlas.autoconfigure.loadbalancer.InstanceChangeSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;

/**
 * ZooKeeper watches as change events, for every caller: a {@link CuratorCache} on the
 * registry path of each service this application calls, started when the service is first
 * called, closed when the application context closes. Each creation, change or deletion
 * of an instance node runs the subscriber (which evicts that service's cached instance
 * list), the nodes found by the cache's initial load included: a change made while the
 * watch starts is not lost, at the cost of a few evictions more at the first call.
 *
 * <p>
 * Spring Cloud ZooKeeper's own watch ({@code ZookeeperServiceWatch}, publishing
 * {@code HeartbeatEvent}) is started only when this application registers itself, so a
 * caller that does not (a batch job, a worker, {@code register=false}) would otherwise
 * see changes only at the cache TTL. When the application does register, both run; an
 * eviction more is harmless. Thread-safe.
 */
public class ZookeeperInstanceChangeSource implements InstanceChangeSource, DisposableBean {

	private static final Logger log = LoggerFactory.getLogger(ZookeeperInstanceChangeSource.class);

	private final CuratorFramework curator;

	private final String root;

	private final UnaryOperator<String> servicePath;

	private final Map<String, CuratorCache> caches = new ConcurrentHashMap<>();

	private volatile boolean closed;

	/**
	 * Creates the source.
	 * @param curator Spring Cloud ZooKeeper's client (its lifecycle is Spring Cloud's)
	 * @param root the registry root ({@code spring.cloud.zookeeper.discovery.root},
	 * {@code /services} by default)
	 * @param servicePath the name a service id is registered under below the root (the
	 * service id itself, or the path of a {@code spring.cloud.zookeeper.dependencies}
	 * alias); never returns {@code null}
	 */
	public ZookeeperInstanceChangeSource(CuratorFramework curator, String root, UnaryOperator<String> servicePath) {
		this.curator = curator;
		this.root = root;
		this.servicePath = servicePath;
	}

	/**
	 * Watches a service's path: each instance node created, changed or deleted below it
	 * (the nodes there when the watch starts included) runs {@code onChange} (on a
	 * Curator thread). A second subscription to the same service adds no second watch;
	 * the first subscriber is the one notified (Atlas subscribes once per service). Never
	 * throws: when the watch cannot start, one WARN says that the service refreshes at
	 * the cache TTL.
	 * @param serviceId the service id, as called
	 * @param onChange run after each change; must be quick and thread-safe
	 */
	@Override
	public void subscribe(String serviceId, Runnable onChange) {
		if (this.closed) {
			return;
		}
		this.caches.computeIfAbsent(serviceId, (id) -> watch(id, onChange));
	}

	private CuratorCache watch(String serviceId, Runnable onChange) {
		String path = ZKPaths.makePath(this.root, this.servicePath.apply(serviceId));
		CuratorCache cache = CuratorCache.build(this.curator, path);
		cache.listenable()
			.addListener(CuratorCacheListener.builder().forAll((type, oldData, data) -> onChange.run()).build());
		try {
			cache.start();
		}
		catch (RuntimeException ex) {
			log.warn("Could not watch ZooKeeper path '{}' of service '{}'; its instance list refreshes at the "
					+ "cache TTL: {}", path, serviceId, ex.getMessage());
		}
		return cache;
	}

	/**
	 * The services watched so far.
	 * @return the service ids, a snapshot
	 */
	public java.util.Set<String> watchedServices() {
		return java.util.Set.copyOf(this.caches.keySet());
	}

	/** Closes every watch; later subscriptions are ignored. */
	@Override
	public void destroy() {
		this.closed = true;
		this.caches.values().forEach(CuratorCache::close);
		this.caches.clear();
	}

}
