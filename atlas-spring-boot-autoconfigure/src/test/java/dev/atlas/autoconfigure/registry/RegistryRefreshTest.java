package dev.atlas.autoconfigure.registry;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerCacheAutoConfiguration;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.event.ContextClosedEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A deregistered instance is no longer picked once the registry reports it. */
class RegistryRefreshTest {

	private final MutableDiscovery discovery = new MutableDiscovery();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class,
				AtlasRegistryAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
				LoadBalancerCacheAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(DiscoveryClient.class, () -> this.discovery)
		.withPropertyValues("spring.cloud.loadbalancer.cache.ttl=35s");

	private static String pick(ApplicationContext context) {
		return Mono
			.from(context.getBean(LoadBalancerClientFactory.class)
				.getInstance("user-service")
				.choose(new DefaultRequest<>()))
			.block()
			.getServer()
			.getInstanceId();
	}

	private static Set<String> picks(ApplicationContext context, int times) {
		Set<String> seen = new HashSet<>();
		for (int i = 0; i < times; i++) {
			seen.add(pick(context));
		}
		return seen;
	}

	@Test
	void aRegistryEventDropsTheDeregisteredInstanceAtOnce() {
		this.runner.run((context) -> {
			assertThat(picks(context, 200)).containsExactlyInAnyOrder("A", "B");
			this.discovery.instances.removeIf((instance) -> instance.getInstanceId().equals("B"));
			// Without an event the 35 s cache still hands out B: the test can tell.
			assertThat(picks(context, 200)).contains("B");
			context.publishEvent(new HeartbeatEvent(this, 1));
			assertThat(picks(context, 200)).containsExactly("A");
		});
	}

	@Test
	void withoutEventsTheTtlBoundHoldsUnderConstantTraffic() {
		this.runner
			.withPropertyValues("spring.cloud.loadbalancer.cache.ttl=1s", "atlas.registry.refresh-on-events=false")
			.run((context) -> {
				assertThat(picks(context, 100)).contains("B");
				this.discovery.instances.removeIf((instance) -> instance.getInstanceId().equals("B"));
				// Traffic every 50 ms never extends the entry: it expires 1 s after it
				// was written.
				await().pollInterval(Duration.ofMillis(50))
					.atMost(Duration.ofSeconds(3))
					.until(() -> !"B".equals(pick(context)) && picks(context, 50).equals(Set.of("A")));
				context.publishEvent(new HeartbeatEvent(this, 1));
			});
	}

	/**
	 * A registry client that stops delivering change events at JVM shutdown (Nacos's):
	 * from the moment the application context closes, its lists refresh without events,
	 * until the phase before the registry client closes.
	 */
	@Test
	void duringShutdownListsRefreshWithoutEventsWhenAChangeSourceStopsDelivering() {
		this.runner.withBean(InstanceChangeSource.class, () -> new SilentAtShutdown()).run((context) -> {
			RegistryEventRefresher refresher = context.getBean(RegistryEventRefresher.class);
			assertThat(picks(context, 200)).containsExactlyInAnyOrder("A", "B");
			context.publishEvent(new ContextClosedEvent(context.getSourceApplicationContext()));
			assertThat(refresher.isRefreshing()).isTrue();
			this.discovery.instances.removeIf((instance) -> instance.getInstanceId().equals("B"));
			await().atMost(Duration.ofSeconds(1)).until(() -> picks(context, 50).equals(Set.of("A")));
			refresher.stop();
			assertThat(refresher.isRefreshing()).isFalse();
			picks(context, 1);
			this.discovery.instances.add(new DefaultServiceInstance("B", "user-service", "b", 80, false));
			// Stopped: the 35 s cache holds again until an event.
			await().during(Duration.ofMillis(500))
				.atMost(Duration.ofSeconds(1))
				.until(() -> picks(context, 50).equals(Set.of("A")));
		});
	}

	/** ZooKeeper's watch keeps delivering during shutdown: no periodic refresh. */
	@Test
	void duringShutdownNoPeriodicRefreshWhenChangesKeepComing() {
		this.runner.withBean(InstanceChangeSource.class, () -> (serviceId, onChange) -> {
		}).run((context) -> {
			context.publishEvent(new ContextClosedEvent(context.getSourceApplicationContext()));
			assertThat(context.getBean(RegistryEventRefresher.class).isRefreshing()).isFalse();
		});
	}

	/** A change source like Nacos's: silent once the JVM shuts down. */
	static final class SilentAtShutdown implements InstanceChangeSource {

		@Override
		public void subscribe(String serviceId, Runnable onChange) {
		}

		@Override
		public boolean deliversDuringShutdown() {
			return false;
		}

	}

	/** A registry whose answer the test changes. */
	static final class MutableDiscovery implements DiscoveryClient {

		final List<ServiceInstance> instances = new CopyOnWriteArrayList<>(
				List.of(new DefaultServiceInstance("A", "user-service", "a", 80, false),
						new DefaultServiceInstance("B", "user-service", "b", 80, false)));

		@Override
		public String description() {
			return "mutable";
		}

		@Override
		public List<ServiceInstance> getInstances(String serviceId) {
			return List.copyOf(this.instances);
		}

		@Override
		public List<String> getServices() {
			return List.of("user-service");
		}

	}

}
