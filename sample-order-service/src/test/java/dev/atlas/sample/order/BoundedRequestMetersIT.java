package dev.atlas.sample.order;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.atlas.sample.user.UserServiceApplication;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Cloud LoadBalancer's {@code loadbalancer.requests.*} meters, switched on, on a
 * real order-service calling a real user-service through a real registry: 2,000 distinct
 * user ids, 500 through each of RestTemplate, RestClient, WebClient and Feign. With Atlas
 * the number of series follows the instances and the clients' URI templates; the same
 * order-service with {@code atlas.enabled=false} (Spring Cloud's lifecycle, whose
 * {@code uri} tag is the request's path for RestTemplate and Feign) is printed and
 * checked to grow with the ids, which shows that the check can fail.
 */
class BoundedRequestMetersIT {

	static final int PATHS = 2_000;

	static SampleFleet fleet;

	static ConfigurableApplicationContext atlasOrders;

	static ConfigurableApplicationContext springOrders;

	@BeforeAll
	static void startRegistryAndServices() throws Exception {
		fleet = new SampleFleet();
		fleet.start(UserServiceApplication.application());
		String meters = "--spring.cloud.loadbalancer.stats.micrometer.enabled=true";
		atlasOrders = fleet.start(OrderServiceApplication.application(), meters);
		springOrders = fleet.start(OrderServiceApplication.application(), meters, "--atlas.enabled=false");
		for (ConfigurableApplicationContext orders : List.of(atlasOrders, springOrders)) {
			SampleFleet.awaitUserServices(orders, "order-service discovers user-service", 1);
		}
	}

	@AfterAll
	static void stopAll() throws Exception {
		if (fleet != null) {
			fleet.close();
		}
	}

	@Test
	void twoThousandPathsThroughEveryClientMakeASeriesPerClientTemplateNotPerPath() throws Exception {
		Series atlas = callDistinctPaths(atlasOrders);
		Series spring = callDistinctPaths(springOrders);
		System.out.printf("[atlas] %s%n[atlas.enabled=false] %s%n", atlas, spring);

		assertThat(atlas.uris()).containsExactlyInAnyOrder("UNKNOWN", UserCalls.USER_URL);
		assertThat(atlas.timers()).as("timers: at most one per client, instance and status")
			.isLessThanOrEqualTo(ClientType.values().length);
		assertThat(atlas.gauges()).as("active-request gauges: one per instance").isEqualTo(1);
		assertThat(spring.timers()).as("Spring Cloud's: one per path a client hands it")
			.isGreaterThanOrEqualTo(PATHS / ClientType.values().length);
	}

	private static Series callDistinctPaths(ConfigurableApplicationContext orders) throws Exception {
		int port = ((WebServerApplicationContext) orders).getWebServer().getPort();
		RestClient http = RestClient.create("http://127.0.0.1:" + port);
		ClientType[] clients = ClientType.values();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> calls = new ArrayList<>();
			for (int id = 1; id <= PATHS; id++) {
				int user = id;
				ClientType client = clients[id % clients.length];
				calls.add(pool.submit(() -> http.get()
					.uri("/orders/{id}?client={client}", user, client.id())
					.retrieve()
					.toBodilessEntity()));
			}
			for (Future<?> call : calls) {
				call.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		MeterRegistry meters = orders.getBean(MeterRegistry.class);
		Set<String> uris = new TreeSet<>();
		meters.find("loadbalancer.requests.success").timers().forEach((timer) -> uris.add(timer.getId().getTag("uri")));

		return new Series(meters.find("loadbalancer.requests.success").timers().size(),
				meters.find("loadbalancer.requests.active").gauges().size(), uris);
	}

	/** The meter series an order-service holds after the calls. */
	private record Series(int timers, int gauges, Set<String> uris) {

		@Override
		public String toString() {
			return "loadbalancer.requests.success timers: " + this.timers + ", loadbalancer.requests.active gauges: "
					+ this.gauges + ", uri values: " + ((this.uris.size() <= 4) ? this.uris : this.uris.size());
		}

	}

}
