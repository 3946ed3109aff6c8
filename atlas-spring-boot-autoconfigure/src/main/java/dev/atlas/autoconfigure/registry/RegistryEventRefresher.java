package dev.atlas.autoconfigure.registry;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.cache.Cache;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.SmartApplicationListener;
import org.springframework.core.Ordered;
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
 * During shutdown, when a registry client stops delivering change events as the JVM shuts
 * down ({@link InstanceChangeSource#deliversDuringShutdown()} is {@code false}: the Nacos
 * client stops its event publishers in a JVM shutdown hook of its own), every cached list
 * is evicted every {@code duringShutdown} (100 ms by default) from the root context's
 * {@link ContextClosedEvent} — the start of the shutdown sequence, whose drain follows —
 * until this lifecycle stops, in the phase just before the registry client closes: the
 * stopping application's own calls (a second hop, a scheduled job) keep following the
 * registry while it drains — for Nacos, its client's local copy, which pushes still
 * update — at the cost of one discovery lookup per service and period. Thread-safe.
 *
 * @since 0.1.0
 */
public class RegistryEventRefresher implements SmartApplicationListener, SmartLifecycle, DisposableBean {

	private static final Logger log = LoggerFactory.getLogger(RegistryEventRefresher.class);

	private final ListableBeanFactory beanFactory;

	private final ApplicationContext context;

	private final BooleanSupplier needed;

	private final Duration duringShutdown;

	/** Guards every field below, and each periodic eviction. */
	private final Object lock = new Object();

	private @Nullable ScheduledExecutorService scheduler;

	private @Nullable ScheduledFuture<?> refreshing;

	private boolean running;

	private boolean destroyed;

	/**
	 * Creates the refresher.
	 * @param beanFactory where Spring Cloud LoadBalancer's cache managers are (none when
	 * caching is off); they are looked up by type on each event because Spring Cloud
	 * declares them as non-autowire candidates
	 * @param context the root application context, whose closing starts the periodic
	 * eviction
	 * @param needed whether the periodic eviction is needed, asked when the context
	 * closes: some change source stops delivering at JVM shutdown
	 * @param duringShutdown how often every cached list is evicted during shutdown;
	 * positive
	 */
	public RegistryEventRefresher(ListableBeanFactory beanFactory, ApplicationContext context, BooleanSupplier needed,
			Duration duringShutdown) {
		this.beanFactory = beanFactory;
		this.context = context;
		this.needed = needed;
		this.duringShutdown = duringShutdown;
	}

	/**
	 * Before Atlas's shutdown sequence ({@code GracefulShutdown}, which blocks its
	 * {@link ContextClosedEvent} for the drain).
	 * @return {@link org.springframework.core.Ordered#HIGHEST_PRECEDENCE}
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public boolean supportsEventType(Class<? extends ApplicationEvent> eventType) {
		return HeartbeatEvent.class.isAssignableFrom(eventType) || ContextClosedEvent.class.isAssignableFrom(eventType);
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event instanceof HeartbeatEvent) {
			evictAll();
		}
		else if (event instanceof ContextClosedEvent closed && closed.getApplicationContext() == this.context
				&& this.needed.getAsBoolean()) {
			startRefreshing();
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
	 * Whether cached lists are being evicted periodically (shutting down).
	 * @return {@code true} while refreshing
	 */
	public boolean isRefreshing() {
		synchronized (this.lock) {
			return this.refreshing != null;
		}
	}

	private void startRefreshing() {
		synchronized (this.lock) {
			if (this.refreshing != null || this.destroyed) {
				return;
			}
			if (this.scheduler == null) {
				CustomizableThreadFactory threads = new CustomizableThreadFactory("atlas-shutdown-refresh-");
				threads.setDaemon(true);
				this.scheduler = Executors.newSingleThreadScheduledExecutor(threads);
			}
			long period = this.duringShutdown.toMillis();
			this.refreshing = this.scheduler.scheduleAtFixedRate(this::evictWhileRefreshing, 0, period,
					TimeUnit.MILLISECONDS);
		}
		log.info("Shutting down: instance lists are refreshed every {} ms until the registry client closes "
				+ "(its change events stop with the JVM)", this.duringShutdown.toMillis());
	}

	private void evictWhileRefreshing() {
		synchronized (this.lock) {
			if (this.refreshing == null) {
				return;
			}
			try {
				evictAll();
			}
			catch (RuntimeException ex) {
				log.debug("Periodic eviction of cached instance lists failed", ex);
			}
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

	@Override
	public void start() {
		synchronized (this.lock) {
			this.running = true;
		}
	}

	/** Ends the periodic eviction; no eviction runs once this returns. */
	@Override
	public void stop() {
		synchronized (this.lock) {
			this.running = false;
			stopRefreshing();
		}
	}

	@Override
	public boolean isRunning() {
		synchronized (this.lock) {
			return this.running;
		}
	}

	/**
	 * Just before the registry client closes ({@code DeferredRegistryClose}, the last
	 * phase), after the web server has stopped.
	 * @return {@link Integer#MIN_VALUE} + 1
	 */
	@Override
	public int getPhase() {
		return Integer.MIN_VALUE + 1;
	}

	/** Not stopped when the context pauses. */
	@Override
	public boolean isPauseable() {
		return false;
	}

	/** Stops the periodic eviction for good; idempotent. */
	@Override
	public void destroy() {
		synchronized (this.lock) {
			this.destroyed = true;
			stopRefreshing();
			if (this.scheduler != null) {
				this.scheduler.shutdownNow();
				this.scheduler = null;
			}
		}
	}

	private Stream<Cache> caches() {
		return this.beanFactory.getBeansOfType(LoadBalancerCacheManager.class)
			.values()
			.stream()
			.map((manager) -> manager.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME))
			.filter(Objects::nonNull);
	}

}
