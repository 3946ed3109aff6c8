package dev.atlas.autoconfigure.loadbalancer;

import java.util.Objects;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.cache.Cache;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.context.ApplicationListener;

/**
 * Event-driven refresh (a stale instance must not be chosen after it left the registry):
 * a registry change event — Spring Cloud's {@link HeartbeatEvent}, which ZooKeeper's
 * watch publishes on every change and other registries publish on their own schedule —
 * evicts every cached instance list, so the next call of each service reads the registry
 * instead of waiting up to the cache TTL. The TTL
 * ({@code spring.cloud.loadbalancer.cache.ttl}) stays as a safety net, measured from
 * write. Thread-safe.
 */
public class RegistryEventRefresher implements ApplicationListener<HeartbeatEvent> {

	private final ListableBeanFactory beanFactory;

	/**
	 * Creates the refresher.
	 * @param beanFactory where Spring Cloud LoadBalancer's cache managers are (none when
	 * caching is off); they are looked up by type on each event because Spring Cloud
	 * declares them as non-autowire candidates
	 */
	public RegistryEventRefresher(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void onApplicationEvent(HeartbeatEvent event) {
		caches().forEach(Cache::clear);
	}

	/**
	 * Evicts the cached instance list of one service (after a per-service change event).
	 * @param serviceId the service
	 */
	public void evict(String serviceId) {
		caches().forEach((cache) -> cache.evict(serviceId));
	}

	private java.util.stream.Stream<Cache> caches() {
		return this.beanFactory.getBeansOfType(LoadBalancerCacheManager.class)
			.values()
			.stream()
			.map((manager) -> manager.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME))
			.filter(Objects::nonNull);
	}

}
