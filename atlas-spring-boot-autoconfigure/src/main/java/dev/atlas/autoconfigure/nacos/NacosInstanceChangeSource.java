package dev.atlas.autoconfigure.nacos;

import com.alibaba.cloud.nacos.NacosDiscoveryProperties;
import com.alibaba.cloud.nacos.NacosServiceManager;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import dev.atlas.autoconfigure.loadbalancer.InstanceChangeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Nacos subscriptions as change events: Nacos pushes instance changes to its client, but
 * Spring Cloud LoadBalancer's cache would hide them for its TTL (and Spring Cloud
 * Alibaba's {@code HeartbeatEvent} comes only every 30 s). Each change of a subscribed
 * service evicts that service's cached list.
 */
public class NacosInstanceChangeSource implements InstanceChangeSource {

	private static final Logger log = LoggerFactory.getLogger(NacosInstanceChangeSource.class);

	private final NacosServiceManager nacos;

	private final NacosDiscoveryProperties properties;

	/**
	 * Creates the source.
	 * @param nacos Spring Cloud Alibaba's naming-service holder
	 * @param properties gives the group
	 */
	public NacosInstanceChangeSource(NacosServiceManager nacos, NacosDiscoveryProperties properties) {
		this.nacos = nacos;
		this.properties = properties;
	}

	@Override
	public void subscribe(String serviceId, Runnable onChange) {
		try {
			this.nacos.getNamingService().subscribe(serviceId, this.properties.getGroup(), (event) -> {
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
