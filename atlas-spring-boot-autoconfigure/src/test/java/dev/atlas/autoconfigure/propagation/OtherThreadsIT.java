package dev.atlas.autoconfigure.propagation;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.atlas.autoconfigure.ZooKeeperApps;
import feign.RequestInterceptor;
import io.micrometer.context.ContextExecutorService;
import io.micrometer.context.ContextSnapshotFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The routing context crosses threads that Atlas did not build, with real applications on
 * the in-process ZooKeeper: a caller serves an inbound request carrying
 * {@code X-Service-Version: v2} and calls the service {@code lanes} (one {@code v2}
 * instance, one untagged) on another thread:
 * <ul>
 * <li>Feign through Spring Cloud CircuitBreaker's Resilience4j
 * ({@code spring.cloud.openfeign.circuitbreaker.enabled=true}), which runs the call on
 * its own executor: Atlas gives that executor the caller's context;</li>
 * <li>an executor the application builds itself, wrapped as docs/routing.md says
 * ({@code ContextExecutorService.wrap}); the same executor unwrapped loses the lane,
 * which shows that the check can fail.</li>
 * </ul>
 */
class OtherThreadsIT {

	private static final HttpClient http = HttpClient.newHttpClient();

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		apps.start(LaneApp.class, "lanes", "app.answer=tagged", "spring.cloud.zookeeper.discovery.metadata.version=v2");
		apps.start(LaneApp.class, "lanes", "app.answer=untagged");
		// A request that lost its lane goes to the untagged (baseline) instance.
		caller = apps.start(LaneApp.class, "lanes-caller", "spring.cloud.openfeign.circuitbreaker.enabled=true");
		ZooKeeperApps.awaitInstances(caller, "lanes", 2);
	}

	@AfterAll
	static void stop() throws Exception {
		if (apps != null) {
			apps.close();
		}
	}

	@Test
	void feignThroughAResilience4jCircuitBreakerStaysInTheLane() throws Exception {
		LaneApp app = caller.getBean(LaneApp.class);
		app.feignThreads.clear();
		for (int i = 0; i < 10; i++) {
			assertThat(serve("/feign")).as("call %d", i).isEqualTo("tagged X-Service-Version=v2");
		}
		assertThat(app.feignThreads).as("threads the Feign calls ran on")
			.hasSize(10)
			.allSatisfy((thread) -> assertThat(thread).startsWith("atlas-circuitbreaker-"));
	}

	@ParameterizedTest(name = "wrapped: {0}")
	@CsvSource({ "true, 10", "false, 0" })
	void anExecutorOfTheApplicationCarriesTheLaneWhenWrapped(boolean wrapped, int tagged) throws Exception {
		int answeredByTagged = 0;
		for (int i = 0; i < 10; i++) {
			if (serve("/own-executor?wrapped=" + wrapped).startsWith("tagged")) {
				answeredByTagged++;
			}
		}
		assertThat(answeredByTagged).as("calls answered by the v2 instance").isEqualTo(tagged);
	}

	private static String serve(String pathAndQuery) throws Exception {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + ZooKeeperApps.port(caller) + pathAndQuery))
			.header("X-Service-Version", "v2")
			.build();
		HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return response.body();
	}

	/**
	 * Provider ({@code GET /echo} answers {@code app.answer} and the gray header it
	 * received) and caller ({@code GET /feign}, {@code GET /own-executor}).
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableFeignClients(clients = LaneApp.LanesClient.class)
	@RestController
	static class LaneApp {

		final Queue<String> feignThreads = new ConcurrentLinkedQueue<>();

		private final Environment environment;

		private final ObjectProvider<LanesClient> feign;

		private final ObjectProvider<RestClient.Builder> restClient;

		private final ExecutorService plain = Executors.newSingleThreadExecutor();

		private final ExecutorService wrapped = ContextExecutorService.wrap(Executors.newSingleThreadExecutor(),
				ContextSnapshotFactory.builder().build()::captureAll);

		LaneApp(Environment environment, ObjectProvider<LanesClient> feign,
				@LoadBalanced ObjectProvider<RestClient.Builder> restClient) {
			this.environment = environment;
			this.feign = feign;
			this.restClient = restClient;
		}

		@Bean
		@LoadBalanced
		RestClient.Builder loadBalancedRestClientBuilder() {
			return RestClient.builder();
		}

		@Bean
		RequestInterceptor recordFeignThread() {
			return (template) -> this.feignThreads.add(Thread.currentThread().getName());
		}

		@GetMapping("/echo")
		String echo(@RequestHeader(name = "X-Service-Version", required = false) String version) {
			return this.environment.getProperty("app.answer") + " X-Service-Version=" + version;
		}

		@GetMapping("/feign")
		String feign() {
			return this.feign.getObject().echo();
		}

		@GetMapping("/own-executor")
		String ownExecutor(@RequestParam boolean wrapped) throws Exception {
			return (wrapped ? this.wrapped : this.plain)
				.submit(() -> this.restClient.getObject()
					.build()
					.get()
					.uri("http://lanes/echo")
					.retrieve()
					.body(String.class))
				.get();
		}

		/** Feign client of {@code lanes}. */
		@FeignClient(name = "lanes", contextId = "lanesClient")
		interface LanesClient {

			@GetMapping("/echo")
			String echo();

		}

	}

}
