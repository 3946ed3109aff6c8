package dev.atlas.autoconfigure.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.UriSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * 100 instances churned through a service of 10 on a real caller and a real registry (the
 * in-process ZooKeeper): ten rounds, each replacing the ten listed instances by ten new
 * ones (registered by hand, all served by one real provider) and calling them. Spring
 * Cloud's {@code loadbalancer.requests.*} meters are on. After the churn the caller holds
 * a gauge for each instance it ever called; once the instances have been idle for two
 * sweeps of the idle window (the window's time is moved on here, the sweeps run as in
 * production, at a request's completion) it holds the live ten only.
 */
class MeterChurnIT {

	private static final String SERVICE = "churned";

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	private static int providerPort;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		// the provider registers under another name: the churned instances are hand-made
		providerPort = ZooKeeperApps.port(apps.start(WhoApp.class, "churn-provider"));
		caller = apps.start(WhoApp.class, "churn-caller", "app.target=" + SERVICE,
				"spring.cloud.loadbalancer.stats.micrometer.enabled=true", "atlas.warmup.enabled=false");
	}

	@AfterAll
	static void stop() throws Exception {
		if (apps != null) {
			apps.close();
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void theMeterSeriesOfChurnedInstancesLeaveAfterTheIdleWindow() throws Exception {
		ServiceDiscovery<ZookeeperInstance> discovery = caller.getBean(ServiceDiscovery.class);
		MeterRegistry meters = caller.getBean(MeterRegistry.class);
		LoadBalancerRequestMeters requestMeters = (LoadBalancerRequestMeters) caller
			.getBean(MicrometerStatsLoadBalancerLifecycle.class);
		List<ServiceInstance<ZookeeperInstance>> live = new ArrayList<>();
		int maxGauges = 0;
		for (int round = 0; round < 10; round++) {
			for (ServiceInstance<ZookeeperInstance> old : live) {
				discovery.unregisterService(old);
			}
			live.clear();
			for (int i = 0; i < 10; i++) {
				String id = "churned-" + round + "-" + i;
				ServiceInstance<ZookeeperInstance> instance = ServiceInstance.<ZookeeperInstance>builder()
					.name(SERVICE)
					.id(id)
					.address("127.0.0.1")
					.port(providerPort)
					.payload(new ZookeeperInstance(id, SERVICE, Map.of()))
					.uriSpec(new UriSpec("{scheme}://{address}:{port}"))
					.build();
				discovery.registerService(instance);
				live.add(instance);
			}
			String prefix = "churned-" + round + "-";
			await().until(() -> caller.getBean(DiscoveryClient.class)
				.getInstances(SERVICE)
				.stream()
				.allMatch((instance) -> instance.getInstanceId().startsWith(prefix)));
			for (int call = 0; call < 40; call++) {
				caller.getBean(WhoApp.class).call("rest-client");
			}
			maxGauges = Math.max(maxGauges, gauges(meters));
		}
		int afterChurn = gauges(meters);
		InstanceStats stats = caller.getBean(LoadBalancerClientFactory.class).getInstance(SERVICE, InstanceStats.class);
		int statsAfterChurn = stats.size();

		// Two idle windows pass; the live instances keep being called.
		requestMeters.moveIdleWindowOn();
		caller.getBean(WhoApp.class).call("rest-client");
		requestMeters.moveIdleWindowOn();
		for (int call = 0; call < 40; call++) {
			caller.getBean(WhoApp.class).call("rest-client");
		}
		System.out.printf(
				"[meter churn] 100 instances churned through 10: %d active-request gauges after the churn"
						+ " (at most %d), %d after two idle windows; Atlas's statistics: %d entries after the churn%n",
				afterChurn, maxGauges, gauges(meters), statsAfterChurn);
		assertThat(afterChurn).as("every instance called has its gauge until the idle window").isGreaterThan(10);
		assertThat(gauges(meters)).as("the live ten").isLessThanOrEqualTo(10);
		assertThat(meters.find("loadbalancer.requests.success").timers()).as("timers of the live ten")
			.hasSizeLessThanOrEqualTo(10);
	}

	private static int gauges(MeterRegistry meters) {
		return meters.find("loadbalancer.requests.active").gauges().size();
	}

}
