package dev.atlas.autoconfigure.zookeeper;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import dev.atlas.autoconfigure.registry.InstanceChangeSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;
import org.jspecify.annotations.Nullable;
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
 *
 * <p>
 * The cache is built with {@link CuratorCache#bridgeBuilder}: a persistent recursive
 * watch (ZooKeeper 3.6+), or Curator's {@code TreeCache} when the client says it has no
 * persistent watches (a ZooKeeper 3.5 client library, or a {@code CuratorFramework} built
 * with {@code zookeeperCompatibility(...)} saying so, e.g. through a Spring Cloud
 * ZooKeeper {@code CuratorFrameworkCustomizer}). Curator cannot tell an older
 * <em>server</em> from the client side: against a 3.5 server without that setting the
 * watch fails inside Curator (which logs an ERROR), Atlas logs one WARN per service when
 * it starts the watch again, and the service refreshes at the cache TTL.
 *
 * @since 0.1.0
 */
public class ZookeeperInstanceChangeSource implements InstanceChangeSource, DisposableBean {

	/** How long a watch may take to load its nodes before it is started again. */
	static final Duration RETRY_AFTER = Duration.ofSeconds(30);

	private static final Logger log = LoggerFactory.getLogger(ZookeeperInstanceChangeSource.class);

	private final CuratorFramework curator;

	private final String root;

	private final UnaryOperator<String> servicePath;

	private final Duration retryAfter;

	private final Map<String, Watch> watches = new ConcurrentHashMap<>();

	private final Set<String> warned = ConcurrentHashMap.newKeySet();

	private volatile boolean closed;

	/**
	 * Creates the source.
	 * @param curator the client of Spring Cloud ZooKeeper (its lifecycle is Spring
	 * Cloud's)
	 * @param root the registry root ({@code spring.cloud.zookeeper.discovery.root},
	 * {@code /services} by default)
	 * @param servicePath the name a service id is registered under below the root (the
	 * service id itself, or the path of a {@code spring.cloud.zookeeper.dependencies}
	 * alias); never returns {@code null}
	 */
	public ZookeeperInstanceChangeSource(CuratorFramework curator, String root, UnaryOperator<String> servicePath) {
		this(curator, root, servicePath, RETRY_AFTER);
	}

	ZookeeperInstanceChangeSource(CuratorFramework curator, String root, UnaryOperator<String> servicePath,
			Duration retryAfter) {
		this.curator = curator;
		this.root = root;
		this.servicePath = servicePath;
		this.retryAfter = retryAfter;
	}

	/**
	 * Watches a service's path: each instance node created, changed or deleted below it
	 * (the nodes there when the watch starts included) runs {@code onChange} (on a
	 * Curator thread). A second subscription to the same service adds no second watch;
	 * the first subscriber is the one notified (Atlas subscribes once per service). Never
	 * throws. A watch that has not loaded its nodes 30 s after it was started (it could
	 * not start, e.g. against a ZooKeeper server without persistent watches) is closed
	 * and started again at the next subscription of any service (a service's first call),
	 * not more often; the first time for a service, one WARN says that its instance list
	 * refreshes at the cache TTL meanwhile. A subscription that races with
	 * {@link #destroy()} leaves no watch open.
	 * @param serviceId the service id, as called
	 * @param onChange run after each change; must be quick and thread-safe
	 */
	@Override
	public void subscribe(String serviceId, Runnable onChange) {
		long now = System.nanoTime();
		for (Map.Entry<String, Watch> entry : this.watches.entrySet()) {
			Watch stalled = entry.getValue();
			if (!stalled.initialized && now - stalled.startedAt >= this.retryAfter.toNanos()
					&& this.watches.remove(entry.getKey(), stalled)) {
				stalled.cache.close();
				if (this.warned.add(entry.getKey())) {
					log.warn("The ZooKeeper watch of path '{}' (service '{}') did not start within {} s (does the "
							+ "ZooKeeper server have persistent watches, 3.6+?); its instance list refreshes at "
							+ "the cache TTL until it does. Starting it again.", stalled.path, entry.getKey(),
							this.retryAfter.toSeconds());
				}
				watch(entry.getKey(), stalled.onChange);
			}
		}
		watch(serviceId, onChange);
	}

	private void watch(String serviceId, Runnable onChange) {
		if (this.closed || this.watches.containsKey(serviceId)) {
			return;
		}
		String path = ZKPaths.makePath(this.root, this.servicePath.apply(serviceId));
		Watch watch = new Watch(CuratorCache.bridgeBuilder(this.curator, path).build(), path, onChange);
		if (this.watches.putIfAbsent(serviceId, watch) != null) {
			return;
		}
		watch.cache.listenable().addListener(CuratorCacheListener.builder().forAll((type, oldData, data) -> {
			if (isInstanceNode(watch, data) || isInstanceNode(watch, oldData)) {
				watch.sawInstance = true;
			}
			onChange.run();
		}).forInitialized(() -> watch.initialized = true).build());
		try {
			watch.cache.start();
		}
		catch (RuntimeException ex) {
			// kept: not initialized, so started again later
			log.warn("Could not watch ZooKeeper path '{}' of service '{}'; its instance list refreshes at the "
					+ "cache TTL until the watch starts: {}", path, serviceId, ex.toString());
		}
		if (this.closed) {
			// destroy() ran meanwhile and may not have seen this watch
			this.watches.remove(serviceId, watch);
			watch.cache.close();
		}
	}

	/**
	 * The services watched so far (for tests).
	 * @return the service ids, a snapshot
	 */
	Set<String> watchedServices() {
		return Set.copyOf(this.watches.keySet());
	}

	/**
	 * Whether the watch of a service holds no instance node: its cache is updated by
	 * ZooKeeper's own events (a deregistration deletes the instance's node) and keeps its
	 * nodes while the connection is lost, so an empty answer it confirms is the truth,
	 * and an outage is not confirmed. Confirms only a watch that has loaded, has held an
	 * instance node before (a load that failed part-way may leave a cache without the
	 * nodes), while the client is connected.
	 * @param serviceId the service id, as subscribed
	 * @return {@code true} when the service's watch holds no node below the service's
	 * path under those conditions
	 */
	@Override
	public boolean confirmsNoInstances(String serviceId) {
		Watch watch = this.watches.get(serviceId);
		if (watch == null || !watch.initialized || !watch.sawInstance || this.closed
				|| !this.curator.getZookeeperClient().isConnected()) {
			return false;
		}
		String prefix = watch.path + '/';
		return watch.cache.stream().noneMatch((node) -> node.getPath().startsWith(prefix));
	}

	private static boolean isInstanceNode(Watch watch, @Nullable ChildData node) {
		return node != null && node.getPath().startsWith(watch.path + '/');
	}

	/** Closes every watch; later subscriptions are ignored. */
	@Override
	public void destroy() {
		this.closed = true;
		this.watches.values().forEach((watch) -> watch.cache.close());
		this.watches.clear();
	}

	private static final class Watch {

		final CuratorCache cache;

		final String path;

		final Runnable onChange;

		final long startedAt = System.nanoTime();

		volatile boolean initialized;

		/** Whether the cache has held an instance node (loaded, created or deleted). */
		volatile boolean sawInstance;

		Watch(CuratorCache cache, String path, Runnable onChange) {
			this.cache = cache;
			this.path = path;
			this.onChange = onChange;
		}

	}

}
