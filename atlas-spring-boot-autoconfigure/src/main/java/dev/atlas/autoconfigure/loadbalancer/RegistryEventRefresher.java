package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.cache.Cache;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.SmartApplicationListener;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Event-driven refresh (a stale instance must not be chosen after it left the registry):
 * a registry change event — Spring Cloud's {@link HeartbeatEvent}, which ZooKeeper's
 * watch publishes on every change and other registries publish on their own schedule —
 * evicts every cached instance list, so the next call of each service reads the registry
 * instead of waiting up to the cache TTL. The TTL
 * ({@code spring.cloud.loadbalancer.cache.ttl}) stays as a safety net, measured from
 * write.
 *
 * <p>
 * While this application refuses traffic (readiness {@code REFUSING_TRAFFIC}: Atlas's
 * shutdown sequence has deregistered it and it drains), change events cannot be relied
 * on: a registry client may stop delivering them as soon as the JVM begins to shut down
 * (the Nacos client's {@code NotifyCenter} shuts its event publishers down in a JVM
 * shutdown hook, next to Spring Boot's). So every cached list is also evicted every
 * {@code whileRefusing} (100 ms by default) until readiness turns
 * {@code ACCEPTING_TRAFFIC} again or the application closes: the stopping application's
 * own calls (a second hop, a scheduled job) keep following the registry's view — for
 * Nacos its client's local copy, which pushes still update — at the cost of one discovery
 * lookup per service and period. Thread-safe.
 */
public class RegistryEventRefresher implements SmartApplicationListener, DisposableBean {

	private static final Logger log = LoggerFactory.getLogger(RegistryEventRefresher.class);

	private final ListableBeanFactory beanFactory;

	private final Duration whileRefusing;

	/** Guards the two fields below. */
	private final Object lock = new Object();

	private @Nullable ScheduledExecutorService scheduler;

	private @Nullable ScheduledFuture<?> refreshing;

	/**
	 * Creates the refresher.
	 * @param beanFactory where Spring Cloud LoadBalancer's cache managers are (none when
	 * caching is off); they are looked up by type on each event because Spring Cloud
	 * declares them as non-autowire candidates
	 * @param whileRefusing how often every cached list is evicted while the application
	 * refuses traffic; positive
	 */
	public RegistryEventRefresher(ListableBeanFactory beanFactory, Duration whileRefusing) {
		this.beanFactory = beanFactory;
		this.whileRefusing = whileRefusing;
	}

	@Override
	public boolean supportsEventType(Class<? extends ApplicationEvent> eventType) {
		return HeartbeatEvent.class.isAssignableFrom(eventType)
				|| AvailabilityChangeEvent.class.isAssignableFrom(eventType);
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event instanceof HeartbeatEvent) {
			evictAll();
		}
		else if (event instanceof AvailabilityChangeEvent<?> availability) {
			if (availability.getState() == ReadinessState.REFUSING_TRAFFIC) {
				startRefreshing();
			}
			else if (availability.getState() == ReadinessState.ACCEPTING_TRAFFIC) {
				stopRefreshing();
			}
		}
	}

	/** Evicts every cached instance list. */
	public void evictAll() {
		caches().forEach(Cache::clear);
	}

	/**
	 * Evicts the cached instance list of one service (after a per-service change event).
	 * @param serviceId the service
	 */
	public void evict(String serviceId) {
		caches().forEach((cache) -> cache.evict(serviceId));
	}

	/**
	 * Whether cached lists are being evicted periodically (the application refuses
	 * traffic).
	 * @return {@code true} while refreshing
	 */
	public boolean isRefreshing() {
		synchronized (this.lock) {
			return this.refreshing != null;
		}
	}

	private void startRefreshing() {
		synchronized (this.lock) {
			if (this.refreshing != null) {
				return;
			}
			if (this.scheduler == null) {
				CustomizableThreadFactory threads = new CustomizableThreadFactory("atlas-drain-refresh-");
				threads.setDaemon(true);
				this.scheduler = Executors.newSingleThreadScheduledExecutor(threads);
			}
			long period = this.whileRefusing.toMillis();
			this.refreshing = this.scheduler.scheduleAtFixedRate(this::evictQuietly, 0, period, TimeUnit.MILLISECONDS);
		}
		log.info("Refusing traffic: instance lists are refreshed every {} ms until the application stops",
				this.whileRefusing.toMillis());
	}

	private void evictQuietly() {
		try {
			evictAll();
		}
		catch (RuntimeException ex) {
			log.debug("Periodic eviction of cached instance lists failed", ex);
		}
	}

	private void stopRefreshing() {
		synchronized (this.lock) {
			if (this.refreshing != null) {
				this.refreshing.cancel(false);
				this.refreshing = null;
			}
		}
	}

	/** Stops the periodic eviction; idempotent. */
	@Override
	public void destroy() {
		synchronized (this.lock) {
			stopRefreshing();
			if (this.scheduler != null) {
				this.scheduler.shutdownNow();
				this.scheduler = null;
			}
		}
	}

	private java.util.stream.Stream<Cache> caches() {
		return this.beanFactory.getBeansOfType(LoadBalancerCacheManager.class)
			.values()
			.stream()
			.map((manager) -> manager.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME))
			.filter(Objects::nonNull);
	}

}
