package dev.atlas.autoconfigure.nacos;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.alibaba.cloud.nacos.NacosDiscoveryProperties;
import com.alibaba.cloud.nacos.NacosServiceManager;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.EventListener;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.discovery.event.InstanceRegisteredEvent;

import static org.assertj.core.api.Assertions.assertThat;

/** A change Nacos pushes evicts the service's cached instance list at once. */
class NacosInstanceChangeSourceTest {

	private final List<Object[]> subscriptions = new ArrayList<>();

	private NamingService naming(boolean fail) {
		return (NamingService) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { NamingService.class }, (proxy, method, args) -> {
					if (method.getName().equals("subscribe")) {
						if (fail) {
							throw new NacosException(NacosException.SERVER_ERROR, "server down");
						}
						this.subscriptions.add(args);
					}
					return null;
				});
	}

	private NacosServiceManager manager(NamingService naming) {
		return manager(new AtomicReference<>(naming));
	}

	private NacosServiceManager manager(AtomicReference<NamingService> naming) {
		return new NacosServiceManager() {
			@Override
			public NamingService getNamingService() {
				return naming.get();
			}
		};
	}

	/**
	 * Spring Cloud Alibaba restarts its registration when its discovery properties change
	 * on refresh, with a new naming service; the subscriptions are made again on it,
	 * once.
	 */
	@Test
	void aReplacedNamingServiceGetsTheSubscriptionsAgainAfterTheNextRegistration() {
		AtomicReference<NamingService> naming = new AtomicReference<>(naming(false));
		AtomicInteger evictions = new AtomicInteger();
		NacosInstanceChangeSource source = new NacosInstanceChangeSource(manager(naming),
				new NacosDiscoveryProperties());
		source.subscribe("user-service", evictions::incrementAndGet);
		source.subscribe("order-service", evictions::incrementAndGet);
		InstanceRegisteredEvent<Object> registered = new InstanceRegisteredEvent<>(this, new Object());
		source.onApplicationEvent(registered);
		assertThat(this.subscriptions).hasSize(2);
		naming.set(naming(false));
		source.onApplicationEvent(registered);
		source.onApplicationEvent(registered);
		assertThat(this.subscriptions).extracting((args) -> args[0])
			.containsExactlyInAnyOrder("user-service", "order-service", "user-service", "order-service");
		((EventListener) this.subscriptions.get(3)[2]).onEvent(new NamingEvent("order-service", List.of()));
		assertThat(evictions).hasValue(1);
	}

	@Test
	void aNacosPushEvictsTheServiceAtOnce() {
		NacosDiscoveryProperties properties = new NacosDiscoveryProperties();
		properties.setGroup("ORDERS");
		AtomicInteger evictions = new AtomicInteger();
		new NacosInstanceChangeSource(manager(naming(false)), properties).subscribe("user-service",
				evictions::incrementAndGet);
		assertThat(this.subscriptions).hasSize(1);
		assertThat(this.subscriptions.get(0)[0]).isEqualTo("user-service");
		assertThat(this.subscriptions.get(0)[1]).isEqualTo("ORDERS");
		EventListener listener = (EventListener) this.subscriptions.get(0)[2];
		listener.onEvent(new NamingEvent("user-service", List.of()));
		assertThat(evictions).hasValue(1);
	}

	@Test
	void aFailedSubscriptionDoesNotFailTheCaller() {
		AtomicInteger evictions = new AtomicInteger();
		new NacosInstanceChangeSource(manager(naming(true)), new NacosDiscoveryProperties()).subscribe("user-service",
				evictions::incrementAndGet);
		assertThat(evictions).hasValue(0);
	}

}
