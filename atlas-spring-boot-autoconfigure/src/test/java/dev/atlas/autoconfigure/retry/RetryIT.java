package dev.atlas.autoconfigure.retry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.autoconfigure.ZooKeeperApps;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Field case C03, with real applications on a real (in-process) ZooKeeper: provider A
 * always answers 503, B answers 200; 503 is retryable (Atlas's default) and Spring Cloud
 * retries once on the next instance.
 *
 * <p>
 * RestTemplate and Feign are covered. A load-balanced {@code RestClient} is not: with
 * Spring Cloud 2025.1.4 its 503s leak to the caller and an only-A service is hit 4 times
 * instead of 2, with or without Atlas ({@code atlas.enabled=false} shows the same), which
 * points at Spring Cloud's RestClient retry path; tracked as an open item.
 */
class RetryIT {

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext providerA;

	private static ConfigurableApplicationContext providerB;

	private static ConfigurableApplicationContext weightedRandomCaller;

	private static ConfigurableApplicationContext smoothRoundRobinCaller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		providerA = app("provider", "app.fail=true");
		providerB = app("provider", "app.fail=false");
		weightedRandomCaller = app("caller", "atlas.loadbalancer.strategy=weighted-random");
		smoothRoundRobinCaller = app("caller", "atlas.loadbalancer.strategy=smooth-round-robin");
		for (ConfigurableApplicationContext caller : List.of(weightedRandomCaller, smoothRoundRobinCaller)) {
			ZooKeeperApps.awaitInstances(caller, "provider", 2);
		}
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static ConfigurableApplicationContext app(String name, String property) {
		return apps.start(App.class, name, "atlas.warmup.enabled=false", property);
	}

	private static int served(ConfigurableApplicationContext provider) {
		return provider.getBean(App.class).served.get();
	}

	@ParameterizedTest(name = "{0} through {1}")
	@CsvSource({ "weighted-random, rest-template", "weighted-random, feign", "smooth-round-robin, rest-template",
			"smooth-round-robin, feign" })
	void case03_retriesGoToTheOtherInstanceAndNoRequestFails(String strategy, String client) throws Exception {
		ConfigurableApplicationContext caller = "weighted-random".equals(strategy) ? weightedRandomCaller
				: smoothRoundRobinCaller;
		App calls = caller.getBean(App.class);
		int a0 = served(providerA);
		int b0 = served(providerB);
		ExecutorService pool = Executors.newFixedThreadPool(50);
		try {
			List<Future<String>> results = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				results.add(pool.submit((Callable<String>) () -> calls.call(client)));
			}
			for (Future<String> result : results) {
				assertThat(result.get()).isEqualTo("B");
			}
		}
		finally {
			pool.shutdown();
		}
		int hitA = served(providerA) - a0;
		int hitB = served(providerB) - b0;
		// Every request that first landed on A was retried once, on B: B served all 50.
		assertThat(hitB).isEqualTo(50);
		assertThat(hitA).as("some first attempts landed on A").isPositive().isLessThan(50);
	}

	@Test
	void case03_withOnlyAThe503ReachesTheCallerNotNoInstanceAvailable() throws Exception {
		ConfigurableApplicationContext onlyA = app("lonely", "app.fail=true");
		ConfigurableApplicationContext caller = app("lonely-caller", "app.target=lonely");
		ZooKeeperApps.awaitInstances(caller, "lonely", 1);
		assertThatThrownBy(() -> caller.getBean(App.class).call("rest-template"))
			.isInstanceOf(HttpServerErrorException.class)
			.hasMessageContaining("503");
		assertThat(onlyA.getBean(App.class).served.get()).isEqualTo(2);
	}

	@FeignClient(name = "provider", contextId = "provider")
	interface ProviderClient {

		@GetMapping("/who")
		String who();

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableFeignClients(clients = ProviderClient.class)
	@RestController
	static class App {

		final AtomicInteger served = new AtomicInteger();

		private final Environment environment;

		private final ObjectProvider<RestClient.Builder> restClient;

		private final ObjectProvider<RestTemplate> restTemplate;

		private final ObjectProvider<ProviderClient> feign;

		App(Environment environment, ObjectProvider<RestClient.Builder> restClient,
				ObjectProvider<RestTemplate> restTemplate, ObjectProvider<ProviderClient> feign) {
			this.environment = environment;
			this.restClient = restClient;
			this.restTemplate = restTemplate;
			this.feign = feign;
		}

		@Bean
		@LoadBalanced
		RestClient.Builder loadBalancedRestClientBuilder() {
			return RestClient.builder();
		}

		@Bean
		@LoadBalanced
		RestTemplate loadBalancedRestTemplate() {
			return new RestTemplate();
		}

		@GetMapping("/who")
		ResponseEntity<String> who() {
			this.served.incrementAndGet();
			boolean fail = this.environment.getProperty("app.fail", Boolean.class, false);
			return fail ? ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("A") : ResponseEntity.ok("B");
		}

		String call(String client) {
			String url = "http://" + this.environment.getProperty("app.target", "provider") + "/who";
			return switch (client) {
				case "rest-client" -> this.restClient.getObject().build().get().uri(url).retrieve().body(String.class);
				case "rest-template" -> this.restTemplate.getObject().getForObject(url, String.class);
				case "feign" -> this.feign.getObject().who();
				default -> throw new IllegalArgumentException(client);
			};
		}

	}

}
