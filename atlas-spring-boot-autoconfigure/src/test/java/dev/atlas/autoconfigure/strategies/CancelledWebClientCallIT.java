package dev.atlas.autoconfigure.strategies;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.stats.InstanceStats;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A WebClient call the caller cancels by its own {@code timeout(…)} while the provider is
 * still answering is no longer counted in flight: Spring Cloud's load-balancer filters
 * complete a request's lifecycle only on a response or an error, so each such call used
 * to stay in flight for ever, and {@code least-request} would shun the instance. Real
 * applications on the in-process ZooKeeper; the provider answers 300 ms late, the caller
 * gives up after 50 ms.
 */
class CancelledWebClientCallIT {

	private static final String SERVICE = "slow-provider";

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		apps.start(WhoApp.class, SERVICE, "app.delay=300ms");
		caller = apps.start(WhoApp.class, "impatient-caller", "app.target=" + SERVICE,
				"atlas.services." + SERVICE + ".loadbalancer.strategy=least-request");
		ZooKeeperApps.awaitInstances(caller, SERVICE, 1);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	@Test
	void callsCancelledByTheCallersTimeoutLeaveNothingInFlight() {
		WebClient client = caller.getBean("loadBalancedWebClientBuilder", WebClient.Builder.class).build();
		// One call that waits for its answer, so that the load-balancer context exists
		// and
		// the timed-out calls below reach the provider rather than time out earlier.
		assertThat(client.get().uri("http://" + SERVICE + "/who").retrieve().bodyToMono(String.class).block())
			.isNotBlank();
		for (int i = 0; i < 10; i++) {
			assertThatThrownBy(() -> client.get()
				.uri("http://" + SERVICE + "/who")
				.retrieve()
				.bodyToMono(String.class)
				.timeout(Duration.ofMillis(50))
				.block()).hasCauseInstanceOf(TimeoutException.class);
		}
		InstanceStats stats = caller.getBean(LoadBalancerClientFactory.class).getInstance(SERVICE, InstanceStats.class);
		// Sent to the provider (a call could time out before that on a very slow
		// machine).
		assertThat(stats.totalRequests()).isGreaterThan(6);
		await().atMost(Duration.ofSeconds(5)).until(() -> stats.inFlightTotal() == 0);
		// The provider's late answers come to nothing: no second completion.
		await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2)).until(() -> stats.inFlightTotal() == 0);
	}

}
