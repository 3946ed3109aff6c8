package dev.atlas.autoconfigure.overload;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The overload marker set by a WebFlux application, on real applications on a real
 * (in-process) ZooKeeper: a WebFlux {@code middle} service whose {@code /relay} calls
 * {@code failing} (two instances answering 503) through a load-balanced, retrying
 * WebClient, and passes the 503 on. After its own retry answered 503 again, or when its
 * budget refused the retry, its answer says {@value OverloadMarks#HEADER}{@code : true};
 * a 503 of its own ({@code /fail}) is unmarked. A second WebFlux service, without retry
 * and with {@code max-in-flight-per-instance=1}, calls two slow providers: when three
 * calls are in flight at once, the one that finds both full is answered marked.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReactiveOverloadMarkerIT {

	private static final int REQUESTS = 5;

	private static final String RATIO = "atlas.retry.budget.ratio";

	private static final String MINIMUM = "atlas.retry.budget.min-retries-per-second";

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext middle;

	private static ConfigurableApplicationContext plainMiddle;

	private static final List<ConfigurableApplicationContext> failing = new ArrayList<>();

	private static final HttpClient http = HttpClient.newHttpClient();

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		failing.add(apps.start(WhoApp.class, "failing", "app.fail=true"));
		failing.add(apps.start(WhoApp.class, "failing", "app.fail=true"));
		apps.start(WhoApp.class, "slow", "app.delay=1500ms");
		apps.start(WhoApp.class, "slow", "app.delay=1500ms");
		middle = apps.start(RelayApp.class, "middle", "spring.main.web-application-type=reactive", "app.target=failing",
				"spring.cloud.loadbalancer.retry.enabled=true", "atlas.warmup.enabled=false",
				"atlas.outlier.enabled=false");
		plainMiddle = apps.start(RelayApp.class, "plain-middle", "spring.main.web-application-type=reactive",
				"app.target=slow", "spring.cloud.loadbalancer.retry.enabled=false", "atlas.warmup.enabled=false",
				"atlas.loadbalancer.max-in-flight-per-instance=1");
		ZooKeeperApps.awaitInstances(middle, "failing", 2);
		ZooKeeperApps.awaitInstances(plainMiddle, "slow", 2);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	/** Answers of the middle service's {@code path}: the marker header of each. */
	private static Set<String> markers(String path) throws Exception {
		Set<String> markers = new HashSet<>();
		for (int i = 0; i < REQUESTS; i++) {
			HttpResponse<String> answer = http.send(get(middle, path), HttpResponse.BodyHandlers.ofString());
			assertThat(answer.statusCode()).isEqualTo(503);
			markers.add(answer.headers().firstValue(OverloadMarks.HEADER).orElse("none"));
		}
		return markers;
	}

	private static HttpRequest get(ConfigurableApplicationContext app, String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ZooKeeperApps.port(app) + path)).build();
	}

	/** Calls the failing providers served. */
	private static int failingCalls() {
		return failing.stream().mapToInt((app) -> app.getBean(WhoApp.class).served()).sum();
	}

	private static long refused() {
		return middle.getBean(LoadBalancerClientFactory.class).getInstance("failing", RetryBudget.class).exhausted();
	}

	@Test
	@Order(1)
	void itsOwn503IsNotMarked() throws Exception {
		assertThat(markers("/fail")).containsExactly("none");
	}

	@Test
	@Order(2)
	void a503ItRetriedInVainIsMarked() throws Exception {
		int before = failingCalls();
		assertThat(markers("/relay")).containsExactly("true");
		assertThat(failingCalls() - before).as("each request retried once on the other provider")
			.isEqualTo(2 * REQUESTS);
		assertThat(refused()).isZero();
	}

	@Test
	@Order(3)
	void a503WhoseRetryItsBudgetRefusedIsMarked() throws Exception {
		middle.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("budget-change", Map.of(RATIO, "0", MINIMUM, "0")));
		middle.publishEvent(new EnvironmentChangeEvent(middle, Set.of(RATIO, MINIMUM)));
		int before = failingCalls();
		assertThat(markers("/relay")).containsExactly("true");
		assertThat(failingCalls() - before).as("no retry").isEqualTo(REQUESTS);
		assertThat(refused()).isEqualTo(REQUESTS);
	}

	@Test
	@Order(4)
	void withoutRetryACallThatFindsEveryInstanceFullIsMarked() throws Exception {
		List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			answers.add(http.sendAsync(get(plainMiddle, "/relay"), HttpResponse.BodyHandlers.ofString()));
		}
		List<String> seen = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> answer : answers) {
			HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
			seen.add(response.statusCode() + " " + response.headers().firstValue(OverloadMarks.HEADER).orElse("none"));
		}
		// two calls take the two providers' single slots; the third finds both full
		assertThat(seen).containsExactlyInAnyOrder("200 none", "200 none", "503 true");
	}

	/** A WebFlux middle service. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@RestController
	static class RelayApp {

		private final WebClient client;

		private final String target;

		RelayApp(WebClient.Builder loadBalancedWebClientBuilder, Environment environment) {
			this.client = loadBalancedWebClientBuilder.build();
			this.target = environment.getRequiredProperty("app.target");
		}

		@Bean
		@LoadBalanced
		static WebClient.Builder loadBalancedWebClientBuilder() {
			return WebClient.builder();
		}

		@GetMapping("/relay")
		Mono<ResponseEntity<String>> relay() {
			return this.client.get()
				.uri("http://" + this.target + "/who")
				.retrieve()
				.toEntity(String.class)
				.onErrorResume(WebClientResponseException.class,
						(failed) -> Mono.just(ResponseEntity.status(failed.getStatusCode()).body("relayed")))
				.onErrorResume(NoInstanceAvailableException::isSaturated,
						(saturated) -> Mono.just(ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("full")));
		}

		@GetMapping("/fail")
		ResponseEntity<String> fail() {
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("over capacity");
		}

	}

}
