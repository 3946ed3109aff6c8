package dev.atlas.sample.order;

import java.util.List;

import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.sample.order.TrafficService.InstanceShare;
import dev.atlas.sample.order.TrafficService.Traffic;
import dev.atlas.sample.user.UserServiceApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * End to end, with a real registry: an in-process ZooKeeper, two user-service instances
 * with weights 1 and 3, and order-service, all started in this JVM. Each of the four
 * {@code @LoadBalanced} clients must split traffic 25 % / 75 %; the same order-service
 * with {@code atlas.enabled=false} (Spring's round robin) must not, which shows that the
 * check can fail.
 */
class WeightedRoutingIT {

	static final int CALLS = 3_000;

	/**
	 * Largest accepted gap between observed and expected share. With weighted random, the
	 * standard deviation of a share p over n calls is sqrt(p(1-p)/n); for p = 0.25 and n
	 * = 3,000 that is about 0.8 percentage points, so 3 points is about 3.8 sigma.
	 */
	static final double TOLERANCE = 0.03;

	static SampleFleet fleet;

	static ConfigurableApplicationContext atlasOrders;

	static ConfigurableApplicationContext roundRobinOrders;

	@BeforeAll
	static void startRegistryAndServices() throws Exception {
		fleet = new SampleFleet();
		fleet.start(UserServiceApplication.application(), "--sample.weight=1");
		fleet.start(UserServiceApplication.application(), "--sample.weight=3");
		// Weights are checked at full strength: warmup (on by default for 60 s after an
		// instance
		// registers) would make these freshly started instances' shares follow their age.
		// Warmup has its own tests (AffinityWarmupIT, SlowStartTest).
		atlasOrders = fleet.start(OrderServiceApplication.application(), "--atlas.warmup.enabled=false");
		roundRobinOrders = fleet.start(OrderServiceApplication.application(), "--atlas.enabled=false");

		// The balancer caches the first instance list it sees: make sure it is complete
		// first.
		for (ConfigurableApplicationContext orders : List.of(atlasOrders, roundRobinOrders)) {
			SampleFleet.awaitUserServices(orders, "order-service discovers both user-service instances", 2);
		}
	}

	@AfterAll
	static void stopAll() throws Exception {
		if (fleet != null) {
			fleet.close();
		}
	}

	@Test
	void atlasIsTheBalancerInCharge() {
		assertThat(balancerOf(atlasOrders)).isInstanceOf(AtlasLoadBalancer.class);
		assertThat(balancerOf(roundRobinOrders)).isNotInstanceOf(AtlasLoadBalancer.class);
	}

	@ParameterizedTest
	@EnumSource(ClientType.class)
	void everyClientFollowsTheWeights(ClientType client) {
		Traffic traffic = send(atlasOrders, client);

		assertThat(traffic.failures()).as("failed calls (first: %s)", traffic.firstError()).isZero();
		assertThat(traffic.instances()).hasSize(2);
		assertThat(traffic.instances()).extracting(InstanceShare::weight).containsExactlyInAnyOrder(1.0, 3.0);
		for (InstanceShare instance : traffic.instances()) {
			double expected = (instance.weight() == 1.0) ? 0.25 : 0.75;
			assertThat(instance.expectedShare()).isCloseTo(expected, within(1e-9));
			assertThat(instance.observedShare())
				.as("share of %s:%d (weight %s) via %s", instance.host(), instance.port(), instance.weight(),
						client.id())
				.isCloseTo(expected, within(TOLERANCE));
		}
	}

	@Test
	void withoutAtlasTheSameCheckFails() {
		Traffic traffic = send(roundRobinOrders, ClientType.REST_TEMPLATE);

		assertThat(traffic.failures()).isZero();
		assertThat(traffic.instances()).hasSize(2).allSatisfy((instance) -> {
			// round robin: an even split, far outside the tolerance around 25 % / 75 %
			assertThat(instance.observedShare()).isCloseTo(0.5, within(TOLERANCE));
			assertThat(Math.abs(instance.observedShare() - instance.expectedShare())).isGreaterThan(TOLERANCE);
		});
	}

	private static Object balancerOf(ConfigurableApplicationContext orders) {
		return orders.getBean(LoadBalancerClientFactory.class).getInstance(TrafficService.USER_SERVICE);
	}

	private static Traffic send(ConfigurableApplicationContext orders, ClientType client) {
		int port = ((WebServerApplicationContext) orders).getWebServer().getPort();
		Traffic traffic = RestClient.create("http://127.0.0.1:" + port)
			.get()
			.uri("/traffic?client={client}&calls={calls}&concurrency=4", client.id(), CALLS)
			.retrieve()
			.body(Traffic.class);
		assertThat(traffic).isNotNull();
		System.out.print(((orders == atlasOrders) ? "[atlas] " : "[atlas.enabled=false] ")
				+ TrafficController.render(traffic, TOLERANCE * 100));
		assertThat(traffic.calls()).isEqualTo(CALLS);
		return traffic;
	}

}
