package dev.atlas.sample.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import dev.atlas.sample.registry.EmbeddedRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Atlas behind Spring Cloud Gateway, with real applications on the in-process ZooKeeper:
 * two untagged user-services and one tagged {@code v2}, one order-service, each in a JVM
 * of its own from its executable jar (a servlet application and the reactive gateway do
 * not share one class path), and the sample gateway in this JVM, routing
 * {@code /api/users/**} to {@code lb://user-service} and {@code /api/orders/**} to
 * {@code lb://order-service}. The gateway has three lane rules (header
 * {@code X-User-Group: beta}, cookie {@code canary=1}, query {@code lane=canary} → v2)
 * and sends 10 % of users to user-service's v2, sticky by {@code X-User-Id}.
 */
class GatewayIT {

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	private static EmbeddedRegistry registry;

	private static final List<ForkedSample> services = new ArrayList<>();

	private static ConfigurableApplicationContext edge;

	private static RestClient gateway;

	@BeforeAll
	static void start() throws Exception {
		registry = EmbeddedRegistry.start(0);
		List<String> common = List.of("--server.port=0", "--management.server.port=0",
				"--spring.cloud.zookeeper.connect-string=" + registry.connectString(), "--spring.main.banner-mode=off",
				"--atlas.lifecycle.drain=0s");
		// weights 1 and 3 on the two untagged instances
		for (String tag : List.of("", "", "v2")) {
			List<String> args = new ArrayList<>(common);
			args.add("--sample.tag=" + tag);
			args.add("--sample.weight=" + ((services.size() == 1) ? 3 : 1));
			services.add(ForkedSample.start("sample.user-service.jar", "user-service-" + services.size(), args));
		}
		services.add(ForkedSample.start("sample.order-service.jar", "order-service", common));
		List<String> args = new ArrayList<>(common);
		args.addAll(List.of("--atlas.warmup.enabled=false",
				// the lane rules of the README's "At the gateway"
				"--atlas.gray.rules[0].tag=v2", "--atlas.gray.rules[0].header=X-User-Group",
				"--atlas.gray.rules[0].equals=beta", "--atlas.gray.rules[1].tag=v2",
				"--atlas.gray.rules[1].cookie=canary", "--atlas.gray.rules[1].equals=1", "--atlas.gray.rules[2].tag=v2",
				"--atlas.gray.rules[2].query=lane", "--atlas.gray.rules[2].regex=canary|v2",
				// 10 % of users to v2, the same user always in the same lane
				"--atlas.services.user-service.gray.weights.v2=10",
				"--atlas.services.user-service.gray.hash-key-header=X-User-Id"));
		edge = GatewayApplication.application().sources(StrippedRoute.class).run(args.toArray(new String[0]));
		DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
		await().atMost(Duration.ofSeconds(120))
			.until(() -> discovery.getInstances("user-service").size() == 3
					&& discovery.getInstances("order-service").size() == 1);
		gateway = RestClient
			.create("http://127.0.0.1:" + ((WebServerApplicationContext) edge).getWebServer().getPort());
	}

	@AfterAll
	static void stop() throws Exception {
		if (edge != null) {
			edge.close();
		}
		for (ForkedSample service : services) {
			service.close();
		}
		if (registry != null) {
			registry.close();
		}
	}

	/** The user-service instance that served one GET through the gateway. */
	@SuppressWarnings("unchecked")
	private static Map<String, Object> servedBy(String uri, Consumer<HttpHeaders> headers) {
		Map<String, Object> user = gateway.get().uri(uri).headers(headers).retrieve().body(JSON);
		return (Map<String, Object>) user.get("servedBy");
	}

	/** The tag of the user-service instance that served one GET through the gateway. */
	private static String tagOf(String uri, Consumer<HttpHeaders> headers) {
		return String.valueOf(servedBy(uri, headers).get("tag"));
	}

	private static String tagOf(Consumer<HttpHeaders> headers) {
		return tagOf("/api/users/1", headers);
	}

	@Test
	void baselineRequestsFollowTheWeights() {
		String baselineUser = usersInV2(200).baseline().get(0);
		int heavy = 0;
		int calls = 2_000;
		for (int i = 0; i < calls; i++) {
			Map<String, Object> served = servedBy("/api/users/1", (headers) -> headers.set("X-User-Id", baselineUser));
			assertThat(served.get("tag")).isNotEqualTo("v2");
			if (((Number) served.get("weight")).doubleValue() == 3.0) {
				heavy++;
			}
		}
		double share = 100.0 * heavy / calls;
		System.out.printf("GatewayIT: %.1f %% of %,d baseline calls on the instance of weight 3%n", share, calls);
		// 75 % expected; 4 points is 4 standard deviations of 2,000 random draws (sd
		// 0.97)
		assertThat(share).isBetween(71.0, 79.0);
	}

	@Test
	void aGrayHeaderARouteRemovesDoesNotChooseTheLaneButTheRulesStillDo() {
		String baselineUser = usersInV2(200).baseline().get(0);
		for (int i = 0; i < 20; i++) {
			assertThat(tagOf("/api/stripped/users/1", (headers) -> {
				headers.set("X-Service-Version", "v2");
				headers.set("X-User-Id", baselineUser);
			})).as("X-Service-Version removed by the route").isNotEqualTo("v2");
			assertThat(tagOf("/api/stripped/users/1", (headers) -> {
				headers.set("X-User-Group", "beta");
				headers.set("X-User-Id", baselineUser);
			})).as("a lane rule, applied after the route's filters").isEqualTo("v2");
		}
	}

	@Test
	void theExplicitHeaderStillNamesTheLane() {
		for (int i = 0; i < 20; i++) {
			assertThat(tagOf((headers) -> headers.set("X-Service-Version", "v2"))).isEqualTo("v2");
		}
	}

	/**
	 * The user-services report their load to callers that ask ({@code user-service.yml}):
	 * a client of the gateway that asks gets no report, and a direct call shows there is
	 * one to remove.
	 */
	@Test
	void theGatewaysClientsGetNoLoadReport() {
		HttpHeaders answer = gateway.get()
			.uri("/api/users/1")
			.header("endpoint-load-metrics-format", "TEXT")
			.retrieve()
			.toBodilessEntity()
			.getHeaders();
		assertThat(answer.containsHeader("endpoint-load-metrics")).isFalse();
		Object port = servedBy("/api/users/1", (headers) -> {
		}).get("port");
		HttpHeaders direct = RestClient.create("http://127.0.0.1:" + port)
			.get()
			.uri("/users/1")
			.header("endpoint-load-metrics-format", "TEXT")
			.retrieve()
			.toBodilessEntity()
			.getHeaders();
		assertThat(direct.getFirst("endpoint-load-metrics")).startsWith("TEXT cpu_utilization=");
	}

	@Test
	void aHeaderRuleSendsBetaUsersToV2AndWinsOverTheirOwnHeader() {
		String baselineUser = usersInV2(200).baseline().get(0);
		for (int i = 0; i < 20; i++) {
			assertThat(tagOf((headers) -> {
				headers.set("X-User-Group", "beta");
				headers.set("X-User-Id", baselineUser);
			})).as("beta, a user the percentage keeps on baseline").isEqualTo("v2");
			assertThat(tagOf((headers) -> {
				headers.set("X-User-Group", "beta");
				headers.set("X-Service-Version", "v1");
			})).as("the rule comes before the header").isEqualTo("v2");
			assertThat(tagOf((headers) -> {
				headers.set("X-User-Group", "alpha");
				headers.set("X-User-Id", baselineUser);
			})).as("no rule matches").isNotEqualTo("v2");
		}
	}

	@Test
	void aCookieRuleAndAQueryRuleSendTheRequestToV2() {
		String baselineUser = usersInV2(200).baseline().get(0);
		for (int i = 0; i < 20; i++) {
			assertThat(tagOf((headers) -> {
				headers.set(HttpHeaders.COOKIE, "session=abc; canary=1");
				headers.set("X-User-Id", baselineUser);
			})).as("cookie canary=1").isEqualTo("v2");
			assertThat(tagOf((headers) -> {
				headers.set(HttpHeaders.COOKIE, "canary=0");
				headers.set("X-User-Id", baselineUser);
			})).as("cookie canary=0").isNotEqualTo("v2");
			assertThat(tagOf("/api/users/1?lane=canary", (headers) -> headers.set("X-User-Id", baselineUser)))
				.as("?lane=canary")
				.isEqualTo("v2");
			assertThat(tagOf("/api/users/1?lane=canaryx", (headers) -> headers.set("X-User-Id", baselineUser)))
				.as("?lane=canaryx: the regex must match the whole value")
				.isNotEqualTo("v2");
		}
	}

	/**
	 * The lane of each of {@code count} distinct users ({@code user-0}, {@code user-1},
	 * ...), one request each.
	 */
	private static Lanes usersInV2(int count) {
		List<String> v2 = new ArrayList<>();
		List<String> baseline = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String user = "user-" + i;
			(tagOf((headers) -> headers.set("X-User-Id", user)).equals("v2") ? v2 : baseline).add(user);
		}
		return new Lanes(v2, baseline);
	}

	@Test
	void tenPercentOfUsersGoToV2AndEachUserAlwaysToTheSameLane() {
		Lanes lanes = usersInV2(1_000);
		double share = 100.0 * lanes.v2().size() / 1_000;
		System.out.printf("GatewayIT: %.1f %% of 1,000 users in v2%n", share);
		// the choice hashes the user id: deterministic for these ids; the criterion's 2
		// points
		assertThat(share).as("share of users in v2, %").isBetween(8.0, 12.0);
		for (String user : lanes.v2().subList(0, 10)) {
			Set<String> seen = new HashSet<>();
			for (int i = 0; i < 10; i++) {
				seen.add(tagOf((headers) -> headers.set("X-User-Id", user)));
			}
			assertThat(seen).as(user).containsExactly("v2");
		}
		for (String user : lanes.baseline().subList(0, 10)) {
			for (int i = 0; i < 10; i++) {
				assertThat(tagOf((headers) -> headers.set("X-User-Id", user))).as(user).isNotEqualTo("v2");
			}
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void aBetaRequestStaysInItsLaneOnEveryHop() {
		for (int i = 0; i < 10; i++) {
			// /api/orders/chain/7: gateway → order-service (untagged only) → user-service
			// (Feign, hop 1) →
			// user-service (WebClient,
			// hop 2); the client sends only the group: the gateway writes the lane as
			// X-Service-Version
			Map<String, Object> chain = gateway.get()
				.uri("/api/orders/chain/7")
				.header("X-User-Group", "beta")
				.retrieve()
				.body(JSON);
			for (String hop : List.of("hop1", "hop2")) {
				Map<String, Object> served = (Map<String, Object>) chain.get(hop);
				assertThat(((Map<String, Object>) served.get("servedBy")).get("tag")).as(hop).isEqualTo("v2");
				assertThat(((Map<String, Object>) served.get("received")).get("version")).as(hop + " received")
					.isEqualTo("v2");
			}
		}
	}

	/**
	 * One more route, beside those of gateway.yml: {@code /api/stripped/users/**} to
	 * user-service, removing the client's {@code X-Service-Version} (how a gateway keeps
	 * clients from choosing a lane themselves).
	 */
	@Configuration(proxyBeanMethods = false)
	static class StrippedRoute {

		@Bean
		RouteLocator strippedRoute(RouteLocatorBuilder routes) {
			return routes.routes()
				.route("stripped",
						(route) -> route.path("/api/stripped/users/**")
							.filters((filters) -> filters.stripPrefix(2).removeRequestHeader("X-Service-Version"))
							.uri("lb://user-service"))
				.build();
		}

	}

	private record Lanes(List<String> v2, List<String> baseline) {
	}

}
