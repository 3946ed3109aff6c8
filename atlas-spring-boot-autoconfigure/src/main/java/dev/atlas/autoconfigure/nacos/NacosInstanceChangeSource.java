package dev.atlas.autoconfigure.nacos;

import java.util.LinkedHashMap;
import java.util.Map;

import com.alibaba.cloud.nacos.NacosDiscoveryProperties;
import com.alibaba.cloud.nacos.NacosServiceManager;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import dev.atlas.autoconfigure.registry.InstanceChangeSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.discovery.event.InstanceRegisteredEvent;
import org.springframework.context.ApplicationListener;

/**
 * Nacos subscriptions as change events: Nacos pushes instance changes to its client, but
 * Spring Cloud LoadBalancer's cache would hide them for its TTL (and Spring Cloud
 * Alibaba's {@code HeartbeatEvent} comes only every 30 s). Each change of a subscribed
 * service evicts that service's cached list.
 *
 * <p>
 * Spring Cloud Alibaba replaces the application's naming service when it restarts its
 * registration (a changed {@code spring.cloud.nacos.discovery.*} on refresh: deregister,
 * shut the naming service down, register through a new one); subscriptions live in the
 * old one. So the source remembers its subscriptions, and after each registration
 * ({@link InstanceRegisteredEvent}) it subscribes them again if the naming service is not
 * the one they were made on. Thread-safe.
 *
 * @since 0.1.0
 */
public class NacosInstanceChangeSource
		implements InstanceChangeSource, ApplicationListener<InstanceRegisteredEvent<?>> {

	private static final Logger log = LoggerFactory.getLogger(NacosInstanceChangeSource.class);

	private final NacosServiceManager nacos;

	private final NacosDiscoveryProperties properties;

	/** Guards every field below, and the subscribing itself. */
	private final Object lock = new Object();

	/** Service id to its callback, in subscription order. */
	private final Map<String, Runnable> subscriptions = new LinkedHashMap<>();

	private @Nullable NamingService subscribedOn;

	/**
	 * Creates the source.
	 * @param nacos the naming-service holder of Spring Cloud Alibaba
	 * @param properties gives the group
	 */
	public NacosInstanceChangeSource(NacosServiceManager nacos, NacosDiscoveryProperties properties) {
		this.nacos = nacos;
		this.properties = properties;
	}

	@Override
	public void subscribe(String serviceId, Runnable onChange) {
		synchronized (this.lock) {
			this.subscriptions.put(serviceId, onChange);
			NamingService naming = namingService();
			if (naming == null) {
				return;
			}
			if (this.subscribedOn != null && this.subscribedOn != naming) {
				resubscribe(naming);
				return;
			}
			this.subscribedOn = naming;
			subscribe(naming, serviceId, onChange);
		}
	}

	/**
	 * After a registration, subscribes again on the application's naming service if it
	 * was replaced since the subscriptions were made.
	 * @param event the registration
	 */
	@Override
	public void onApplicationEvent(InstanceRegisteredEvent<?> event) {
		synchronized (this.lock) {
			if (this.subscribedOn == null) {
				return;
			}
			NamingService naming = namingService();
			if (naming != null && naming != this.subscribedOn) {
				resubscribe(naming);
			}
		}
	}

	/** Caller holds the lock. */
	private void resubscribe(NamingService naming) {
		log.info("The Nacos naming service was replaced (registration restarted); subscribing again to the changes "
				+ "of {} service(s)", this.subscriptions.size());
		this.subscribedOn = naming;
		this.subscriptions.forEach((serviceId, onChange) -> subscribe(naming, serviceId, onChange));
	}

	/**
	 * The Nacos client shuts its event publishers ({@code NotifyCenter}) down in a JVM
	 * shutdown hook of its own, next to Spring Boot's: on SIGTERM, pushes still update
	 * its local copy, but no change event reaches this source any more.
	 * @return {@code false}
	 */
	@Override
	public boolean deliversDuringShutdown() {
		return false;
	}

	private @Nullable NamingService namingService() {
		try {
			return this.nacos.getNamingService();
		}
		catch (RuntimeException ex) {
			log.warn("Could not get the Nacos naming service; instance lists refresh at the cache TTL: {}",
					ex.getMessage());
			return null;
		}
	}

	private void subscribe(NamingService naming, String serviceId, Runnable onChange) {
		try {
			naming.subscribe(serviceId, this.properties.getGroup(), (event) -> {
				if (event instanceof NamingEvent) {
					onChange.run();
				}
			});
		}
		catch (NacosException | RuntimeException ex) {
			log.warn("Could not subscribe to Nacos changes of service '{}'; its instance list refreshes at the "
					+ "cache TTL: {}", serviceId, ex.getMessage());
		}
	}

}
