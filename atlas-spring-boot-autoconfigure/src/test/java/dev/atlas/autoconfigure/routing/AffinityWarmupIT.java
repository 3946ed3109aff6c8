package dev.atlas.autoconfigure.routing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.atlas.autoconfigure.ZooKeeperApps.port;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Field cases C07 and C11 with real applications on a real (in-process) ZooKeeper. */
class AffinityWarmupIT {

	private ZooKeeperApps apps;

	@BeforeEach
	void registry() throws Exception {
		this.apps = new ZooKeeperApps();
	}

	@AfterEach
	void stop() throws Exception {
		this.apps.close();
	}

	private ConfigurableApplicationContext app(String name, String... properties) {
		return this.apps.start(WhoApp.class, name, properties);
	}

	private static Map<Integer, Integer> calls(ConfigurableApplicationContext caller, int times) {
		Map<Integer, Integer> byPort = new HashMap<>();
		WhoApp client = caller.getBean(WhoApp.class);
		for (int i = 0; i < times; i++) {
			byPort.merge(Integer.parseInt(client.call()), 1, Integer::sum);
		}
		return byPort;
	}

	private static void awaitInstances(ConfigurableApplicationContext caller, int count) {
		ZooKeeperApps.awaitInstances(caller, "provider", count);
	}

	@Test
	void case07_ownClusterOnlyThenSpillOverWhenItIsGone() {
		ConfigurableApplicationContext a1 = app("provider", "spring.cloud.zookeeper.discovery.metadata.zone=A");
		ConfigurableApplicationContext a2 = app("provider", "spring.cloud.zookeeper.discovery.metadata.zone=a");
		ConfigurableApplicationContext b1 = app("provider", "spring.cloud.zookeeper.discovery.metadata.zone=b");
		ConfigurableApplicationContext b2 = app("provider", "spring.cloud.zookeeper.discovery.metadata.zone=b");
		ConfigurableApplicationContext caller = app("caller", "atlas.affinity.cluster=a", "atlas.warmup.enabled=false");
		awaitInstances(caller, 4);
		assertThat(calls(caller, 200).keySet()).containsExactlyInAnyOrder(port(a1), port(a2));
		MeterRegistry meters = caller.getBean(MeterRegistry.class);
		assertThat(meters.counter("atlas.affinity.spillover", "service", "provider").count()).isZero();
		// Cluster a goes away: the registry event reaches the caller, which spills over
		// to b.
		a1.close();
		a2.close();
		awaitInstances(caller, 2);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> calls(caller, 20).keySet().equals(java.util.Set.of(port(b1), port(b2))));
		assertThat(calls(caller, 100).keySet()).containsExactlyInAnyOrder(port(b1), port(b2));
		assertThat(meters.counter("atlas.affinity.spillover", "service", "provider").count())
			.isGreaterThanOrEqualTo(100);
	}

	@Test
	void case11_aNewInstanceRampsUpOverItsWarmup() {
		ConfigurableApplicationContext old = app("provider");
		ConfigurableApplicationContext caller = app("caller", "atlas.warmup.duration=6s");
		awaitInstances(caller, 1);
		calls(caller, 10);
		// Let the old instance age past the 6 s window (measured from its own
		// registration).
		long oldRegisteredAt = registeredAt(caller, port(old));
		await().atMost(Duration.ofSeconds(15)).until(() -> System.currentTimeMillis() - oldRegisteredAt > 6_500);
		ConfigurableApplicationContext young = app("provider");
		awaitInstances(caller, 2);
		long youngRegisteredAt = registeredAt(caller, port(young));
		// Windows of 200 calls; share of the young instance and its age at the window's
		// end.
		List<double[]> ramp = new ArrayList<>();
		while (System.currentTimeMillis() - youngRegisteredAt < 8_000) {
			Map<Integer, Integer> window = calls(caller, 200);
			ramp.add(new double[] { System.currentTimeMillis() - youngRegisteredAt,
					window.getOrDefault(port(young), 0) / 200.0 });
		}
		ramp.forEach((point) -> System.out.printf("warmup ramp: age %5.0f ms, share %.3f%n", point[0], point[1]));
		double[] first = ramp.get(0);
		double[] last = ramp.get(ramp.size() - 1);
		// Expected shares: age 1-2 s -> factor 0.17-0.34 -> 15-25 %; after 6 s -> 50 %.
		// 200 calls: sigma
		// below 3.6 points; tolerances 12 points.
		assertThat(first[0]).isLessThan(3_000);
		assertThat(first[1]).isLessThan(0.30);
		assertThat(last[1]).isBetween(0.38, 0.62);
		assertThat(last[1]).isGreaterThan(first[1] + 0.15);
	}

	private static long registeredAt(ConfigurableApplicationContext caller, int port) {
		for (ServiceInstance instance : caller.getBean(DiscoveryClient.class).getInstances("provider")) {
			if (instance.getPort() == port) {
				return Long.parseLong(instance.getMetadata().get("atlas.registered-at"));
			}
		}
		throw new IllegalStateException("no instance on port " + port);
	}

}
