package dev.atlas.autoconfigure.zookeeper;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With real applications on a real (in-process) ZooKeeper: a caller that does not
 * register itself (a batch job, a worker: no web server, registration off) hears of the
 * changes of the services it calls. Spring Cloud ZooKeeper starts its own change watch
 * only when the application registers, so without Atlas's per-service watch this caller
 * keeps choosing a stopped provider until the 35 s cache expires.
 */
class NonRegisteringCallerIT {

	private ZooKeeperApps apps;

	@BeforeEach
	void start() throws Exception {
		this.apps = new ZooKeeperApps();
	}

	@AfterEach
	void stop() throws Exception {
		this.apps.close();
	}

	@Test
	void aStoppedProviderIsNeverChosenAgainWithinTwoSeconds() {
		ConfigurableApplicationContext kept = this.apps.start(WhoApp.class, "worker-target");
		ConfigurableApplicationContext stopped = this.apps.start(WhoApp.class, "worker-target");
		ConfigurableApplicationContext worker = this.apps.start(WhoApp.class, "worker",
				"spring.main.web-application-type=none", "spring.cloud.zookeeper.discovery.register=false",
				"app.target=worker-target", "atlas.warmup.enabled=false", "spring.cloud.loadbalancer.cache.ttl=35s");
		ZooKeeperApps.awaitInstances(worker, "worker-target", 2);
		int keptPort = ZooKeeperApps.port(kept);
		int stoppedPort = ZooKeeperApps.port(stopped);
		LoadBalancerClient loadBalancer = worker.getBean(LoadBalancerClient.class);
		// Both are chosen: the list is in the cache.
		assertThat(ports(loadBalancer, 100)).containsExactlyInAnyOrder(keptPort, stoppedPort);

		stopped.close();

		await().pollInterval(Duration.ofMillis(50))
			.atMost(Duration.ofSeconds(2))
			.until(() -> ports(loadBalancer, 50).equals(Set.of(keptPort)));
		// Never again, and no call fails.
		assertThat(ports(loadBalancer, 500)).containsExactly(keptPort);
		WhoApp calls = worker.getBean(WhoApp.class);
		for (int i = 0; i < 20; i++) {
			assertThat(calls.call("rest-template")).isEqualTo(String.valueOf(keptPort));
		}
	}

	private static Set<Integer> ports(LoadBalancerClient loadBalancer, int picks) {
		Set<Integer> ports = new HashSet<>();
		for (int i = 0; i < picks; i++) {
			ServiceInstance chosen = loadBalancer.choose("worker-target");
			ports.add((chosen != null) ? chosen.getPort() : -1);
		}
		return ports;
	}

}
