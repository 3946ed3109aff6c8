package dev.atlas.autoconfigure.routing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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

/**
 * Cluster affinity (own cluster first, spill-over when it is gone) and warmup (a new
 * instance ramps up), with real applications on a real (in-process) ZooKeeper.
 */
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
	void ownClusterOnlyThenSpillOverWhenItIsGone() {
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
			.until(() -> calls(caller, 20).keySet().equals(Set.of(port(b1), port(b2))));
		assertThat(calls(caller, 100).keySet()).containsExactlyInAnyOrder(port(b1), port(b2));
		assertThat(meters.counter("atlas.affinity.spillover", "service", "provider").count())
			.isGreaterThanOrEqualTo(100);
	}

	@Test
	void aNewInstanceRampsUpOverItsWarmup() {
		ConfigurableApplicationContext old = app("provider");
		ConfigurableApplicationContext caller = app("caller", "atlas.warmup.duration=10s");
		awaitInstances(caller, 1);
		calls(caller, 10);
		// Let the old instance age past the 10 s window (measured from its own
		// registration).
		long oldRegisteredAt = registeredAt(caller, port(old));
		await().atMost(Duration.ofSeconds(25)).until(() -> System.currentTimeMillis() - oldRegisteredAt > 10_500);
		ConfigurableApplicationContext young = app("provider");
		awaitInstances(caller, 2);
		long youngRegisteredAt = registeredAt(caller, port(young));
		// Windows of 200 calls, until one starts after the warmup: the young instance's
		// age when the window starts and ends, and its share in the window.
		List<double[]> ramp = new ArrayList<>();
		long start;
		do {
			start = System.currentTimeMillis() - youngRegisteredAt;
			Map<Integer, Integer> window = calls(caller, 200);
			ramp.add(new double[] { start, System.currentTimeMillis() - youngRegisteredAt,
					window.getOrDefault(port(young), 0) / 200.0 });
		}
		while (start < 10_500);
		ramp.forEach((window) -> System.out.printf("warmup ramp: age %5.0f-%5.0f ms, share %.3f (curve %.3f-%.3f)%n",
				window[0], window[1], window[2], expectedShare(window[0] - 1_000), expectedShare(window[1])));
		// Each window's share lies on the slow-start curve between its start (less the
		// 1 s tick at which effective weights are recomputed) and its end, whatever the
		// machine's speed. 200 calls: sigma at most 3.5 points; tolerance 13 points.
		for (double[] window : ramp) {
			assertThat(window[2]).as("share at age %.0f-%.0f ms", window[0], window[1])
				.isBetween(expectedShare(window[0] - 1_000) - 0.13, expectedShare(window[1]) + 0.13);
		}
		// The ramp was observed in its first half (an instance at full weight would
		// show 50 %, beyond the tolerance there), and after it the share is half.
		assertThat(ramp.get(0)[1]).isLessThan(5_000);
		assertThat(ramp.get(ramp.size() - 1)[2]).isBetween(0.37, 0.63);
	}

	/**
	 * The young instance's expected share next to one warm instance of the same weight: f
	 * / (1 + f), with Envoy's slow-start factor for aggression 1.0 and a minimum weight
	 * of 10 % over 10 s: f = max(0.1, age / 10 s), at most 1.
	 */
	private static double expectedShare(double ageMillis) {
		double factor = Math.min(1.0, Math.max(0.1, ageMillis / 10_000));
		return factor / (1 + factor);
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
