package dev.atlas.sample.order;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

import dev.atlas.sample.order.ChainService.Chain;
import dev.atlas.sample.order.OrderController.Order;
import dev.atlas.sample.order.TrafficService.InstanceShare;
import dev.atlas.sample.order.TrafficService.Traffic;
import dev.atlas.sample.user.UserController.NextUser;
import dev.atlas.sample.user.UserServiceApplication;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Gray-tag routing end to end (the tag follows every hop; lanes, fallback and canary),
 * with a real registry: an in-process ZooKeeper, user-service v1 ×2 and v2 ×2 (each with
 * Atlas, each able to make a second hop to user-service through a WebClient after moving
 * to {@code boundedElastic}), and two order-services, all in this JVM on random ports:
 * <ul>
 * <li>{@code orders}: {@code atlas.gray.baseline-tags=v1}, an {@code @Async} pool of
 * exactly one thread, every other Atlas default (warmup included);</li>
 * <li>{@code canaryOrders}: {@code atlas.gray.baseline-tags=v1}, a 10 % canary
 * ({@code atlas.services.user-service.gray.weights.v2=10}), {@code fallback=none} for
 * user-service, a hash-key header, and warmup off (its traffic table compares shares with
 * full weights).</li>
 * </ul>
 * The gray header is always sent as an <em>inbound</em> header to order-service, over
 * plain HTTP, as in production; nothing in the samples copies it by hand.
 */
class GrayRoutingIT {

	static final String VERSION = "X-Service-Version";

	static final String USER_KEY = "X-User-Id";

	/** How often a routing check is repeated. */
	static final int REPEAT = 20;

	static final List<ConfigurableApplicationContext> userServices = new ArrayList<>();

	static SampleFleet fleet;

	static ConfigurableApplicationContext orders;

	static ConfigurableApplicationContext canaryOrders;

	static RestClient ordersHttp;

	static RestClient canaryHttp;

	@BeforeAll
	static void startRegistryAndFleet() throws Exception {
		fleet = new SampleFleet();
		for (String tag : List.of("v1", "v1", "v2", "v2")) {
			userServices.add(fleet.start(UserServiceApplication.application(), "--sample.tag=" + tag,
					"--atlas.gray.baseline-tags=v1"));
		}
		orders = fleet.start(OrderServiceApplication.application(), "--atlas.gray.baseline-tags=v1",
				// one async thread, so that consecutive requests share it
				"--spring.task.execution.pool.core-size=1", "--spring.task.execution.pool.max-size=1");
		canaryOrders = fleet.start(OrderServiceApplication.application(), "--atlas.gray.baseline-tags=v1",
				"--atlas.services.user-service.gray.weights.v2=10",
				// the canary split between lanes does not depend on warmup, but the
				// printed
				// per-instance table compares with full weights
				"--atlas.warmup.enabled=false", "--atlas.services.user-service.gray.fallback=none",
				"--atlas.gray.hash-key-header=" + USER_KEY,
				// one balancer request per call: with spring-retry (on the sample's
				// classpath)
				// Feign's retrying client asks the balancer again after "no instance",
				// and the
				// fallback counter below would count that call twice
				"--spring.cloud.loadbalancer.retry.enabled=false");
		ordersHttp = http(orders);
		canaryHttp = http(canaryOrders);

		// Every caller (order-services, and user-services for the second hop) must see
		// the
		// whole fleet before its balancer caches its first list.
		List<ConfigurableApplicationContext> callers = new ArrayList<>(userServices);
		callers.add(orders);
		callers.add(canaryOrders);
		for (ConfigurableApplicationContext caller : callers) {
			SampleFleet.awaitUserServices(caller, "every caller discovers the four user-service instances", 4);
		}
	}

	@AfterAll
	static void stopAll() throws Exception {
		userServices.clear();
		if (fleet != null) {
			fleet.close();
		}
	}

	/**
	 * Inbound v2 → order-service calls Feign from an {@code @Async} method → user-service
	 * calls user-service through a WebClient after moving to {@code boundedElastic}: both
	 * hops carry v2 and land on v2 instances.
	 */
	@Test
	void grayHeaderCrossesAsyncFeignAndReactiveHops() {
		for (int i = 0; i < REPEAT; i++) {
			Chain chain = chain(ordersHttp, i, "v2");

			assertThat(chain.hop1().callerThread()).as("hop 1 runs on the @Async pool").startsWith("task-");
			assertThat(chain.hop1().tag()).as("hop 1 (Feign from @Async): %s", chain).isEqualTo("v2");
			assertThat(chain.hop1().received().version()).isEqualTo("v2");
			assertThat(chain.hop2().tag()).as("hop 2 (WebClient after boundedElastic): %s", chain).isEqualTo("v2");
			assertThat(chain.hop2().received().version()).isEqualTo("v2");
		}
	}

	/**
	 * With an async pool of one thread, a v2 request and then an untagged one run on the
	 * same thread; the untagged one must go to baseline (v1) on both hops, without a
	 * header.
	 */
	@Test
	void untaggedRequestAfterV2OnTheSameAsyncThreadGoesToBaseline() {
		for (int i = 0; i < REPEAT / 2; i++) {
			Chain tagged = chain(ordersHttp, 2 * i, "v2");
			Chain untagged = chain(ordersHttp, 2 * i + 1, null);

			assertThat(untagged.hop1().callerThread()).as("the same async thread")
				.isEqualTo(tagged.hop1().callerThread());
			assertThat(tagged.hop1().tag()).isEqualTo("v2");
			assertThat(tagged.hop2().tag()).isEqualTo("v2");
			assertThat(untagged.hop1().tag()).as("hop 1 after a v2 request: %s", untagged).isEqualTo("v1");
			assertThat(untagged.hop1().received().version()).isNull();
			assertThat(untagged.hop2().tag()).as("hop 2 after a v2 request: %s", untagged).isEqualTo("v1");
			assertThat(untagged.hop2().received().version()).isNull();
		}
	}

	/**
	 * The second hop is made from a {@code boundedElastic} thread (not the servlet thread
	 * that received the header) and still carries v2 — whether user-service returns the
	 * Mono to Spring MVC (the chain) or blocks on it ({@code ?block=true}, asked of a v1
	 * instance directly).
	 */
	@Test
	void webClientAfterBoundedElasticKeepsTheTag() {
		RestClient v1UserService = http(userServices.get(0));
		for (int i = 0; i < REPEAT; i++) {
			Chain chain = chain(ordersHttp, i, "v2");

			assertThat(chain.hop2().callerThread()).as("the thread that made hop 2").startsWith("boundedElastic-");
			assertThat(chain.hop2().tag()).as("hop 2: %s", chain).isEqualTo("v2");
			assertThat(chain.hop2().received().version()).isEqualTo("v2");

			NextUser blocking = v1UserService.get()
				.uri("/users/{id}/next?block=true", i)
				.header(VERSION, "v2")
				.retrieve()
				.body(NextUser.class);
			assertThat(blocking.servedBy().tag()).isEqualTo("v1");
			assertThat(blocking.nextHopThread()).startsWith("boundedElastic-");
			assertThat(blocking.next().servedBy().tag()).as("blocking hop 2: %s", blocking).isEqualTo("v2");
			assertThat(blocking.next().received().version()).isEqualTo("v2");
		}
	}

	/**
	 * Order-service's own RestTemplate interceptor runs before the load-balancer
	 * interceptor; inbound v2 still routes the RestTemplate call to v2, and the call
	 * carries both the application's header and the gray header.
	 */
	@Test
	void userInterceptorOrderedFirstDoesNotHideTheTag() {
		List<ClientHttpRequestInterceptor> interceptors = orders.getBean(RestTemplate.class).getInterceptors();
		assertThat(interceptors.get(0)).isInstanceOf(CallerInterceptor.class);
		assertThat(interceptors.subList(1, interceptors.size())).as("interceptors after the user's")
			.anySatisfy((interceptor) -> assertThat(interceptor.getClass().getSimpleName())
				.endsWith("LoadBalancerInterceptor"));

		for (int i = 0; i < REPEAT; i++) {
			Order order = order(ordersHttp, i, ClientType.REST_TEMPLATE, "v2").getBody();

			assertThat(order.user().servedBy().tag()).as("rest-template with v2: %s", order).isEqualTo("v2");
			assertThat(order.user().received().caller()).isEqualTo(CallerInterceptor.CALLER);
			assertThat(order.user().received().version()).isEqualTo("v2");
		}
	}

	/**
	 * Header v2 → v2 instances only; no header → baseline (v1) only, for every client.
	 */
	@ParameterizedTest
	@EnumSource(ClientType.class)
	void everyClientRoutesByTagWithBaselineIsolation(ClientType client) {
		for (int i = 0; i < REPEAT; i++) {
			User v2 = order(ordersHttp, i, client, "v2").getBody().user();
			User untagged = order(ordersHttp, i, client, null).getBody().user();

			assertThat(v2.servedBy().tag()).as("%s with v2: %s", client.id(), v2).isEqualTo("v2");
			assertThat(v2.received().version()).isEqualTo("v2");
			assertThat(untagged.servedBy().tag()).as("%s without header: %s", client.id(), untagged).isEqualTo("v1");
			assertThat(untagged.received().version()).isNull();
		}
	}

	/**
	 * A tag nobody runs (v3) falls back to baseline (v1) with the default policy, on
	 * every client and on both hops of the chain, and each fallback is counted in
	 * {@code atlas.gray.fallback{service=user-service,policy=baseline}}.
	 */
	@Test
	void unknownTagFallsBackToBaselineAndIsCounted() {
		double before = fallbacks(orders, "baseline");
		int calls = 0;
		for (ClientType client : ClientType.values()) {
			for (int i = 0; i < 5; i++) {
				User user = order(ordersHttp, i, client, "v3").getBody().user();
				calls++;
				assertThat(user.servedBy().tag()).as("%s with v3: %s", client.id(), user).isEqualTo("v1");
			}
		}
		assertThat(fallbacks(orders, "baseline")).isEqualTo(before + calls);

		Chain chain = chain(ordersHttp, 1, "v3");
		assertThat(chain.hop1().tag()).as("hop 1 with v3: %s", chain).isEqualTo("v1");
		assertThat(chain.hop2().tag()).as("hop 2 with v3: %s", chain).isEqualTo("v1");
		assertThat(chain.hop2().received().version()).isEqualTo("v3");
	}

	/**
	 * The fallback as the demo reports it: {@code /gray} sends v3 as an inbound header to
	 * {@code /chain/{id}}; both hops land on v1, and order-service counted one fallback
	 * per call.
	 */
	@Test
	void grayReportShowsTheFallbackToBaselineOnBothHops() {
		GrayReport.Result result = ordersHttp.get()
			.uri("/gray?version=v3&calls=20&concurrency=2&expect=v1")
			.retrieve()
			.body(GrayReport.Result.class);
		System.out.print(GrayReport.render(result));

		assertThat(result.problems()).isEmpty();
		assertThat(result.hops()).hasSize(2)
			.allSatisfy((hop) -> assertThat(hop.counts()).containsOnly(Map.entry("v1", 20L)));
		assertThat(result.fallbacks()).isEqualTo(20);
	}

	/**
	 * With {@code atlas.services.user-service.gray.fallback=none}, v3 gets no instance:
	 * every client's call fails, order-service answers 503, and each one is counted under
	 * {@code policy=none}.
	 */
	@ParameterizedTest
	@EnumSource(ClientType.class)
	void fallbackNoneAnswers503AndIsCounted(ClientType client) {
		double before = fallbacks(canaryOrders, "none");

		ResponseEntity<Order> response = order(canaryHttp, 7, client, "v3");

		assertThat(response.getStatusCode().value()).as("%s with v3 and fallback=none: %s", client.id(), response)
			.isEqualTo(503);
		assertThat(fallbacks(canaryOrders, "none")).isEqualTo(before + 1);
		// the same context still serves a tag that exists
		assertThat(order(canaryHttp, 7, client, "v2").getBody().user().servedBy().tag()).isEqualTo("v2");
	}

	/**
	 * {@code atlas.services.user-service.gray.weights.v2=10} sends 10 % ± 2 points of
	 * 10,000 untagged calls to v2; the traffic report expects exactly that split.
	 */
	@Test
	void percentageCanarySendsTenPercentOfUntaggedTrafficToV2() {
		Traffic traffic = canaryHttp.get()
			.uri("/traffic?client=rest-client&calls=10000&concurrency=8")
			.retrieve()
			.body(Traffic.class);
		System.out.print("[canary v2=10] " + TrafficController.render(traffic, 2));

		assertThat(traffic.failures()).as("failed calls (first: %s)", traffic.firstError()).isZero();
		assertThat(share(traffic, "v2", InstanceShare::observedShare)).isCloseTo(0.10, within(0.02));
		assertThat(share(traffic, "v2", InstanceShare::expectedShare)).isCloseTo(0.10, within(1e-9));
		assertThat(share(traffic, "v1", InstanceShare::expectedShare)).isCloseTo(0.90, within(1e-9));
	}

	/**
	 * With a hash-key header, the percentage choice is sticky: the same user key always
	 * lands in the same lane (and, over 100 keys, both lanes are used).
	 */
	@Test
	void sameHashKeyAlwaysLandsInTheSameLane() {
		Map<String, Set<String>> lanesByKey = new HashMap<>();
		for (int round = 0; round < 3; round++) {
			for (int key = 0; key < 100; key++) {
				String userKey = "user-" + key;
				Order order = canaryHttp.get()
					.uri("/orders/{id}?client=feign", key)
					.header(USER_KEY, userKey)
					.retrieve()
					.body(Order.class);
				lanesByKey.computeIfAbsent(userKey, (k) -> new HashSet<>()).add(order.user().servedBy().tag());
			}
		}
		assertThat(lanesByKey).allSatisfy((key, lanes) -> assertThat(lanes).as("lanes of %s", key).hasSize(1));
		assertThat(lanesByKey.values().stream().flatMap(Set::stream).distinct()).containsExactlyInAnyOrder("v1", "v2");
	}

	private static double share(Traffic traffic, String tag, ToDoubleFunction<InstanceShare> share) {
		return traffic.instances().stream().filter((instance) -> tag.equals(instance.tag())).mapToDouble(share).sum();
	}

	private static double fallbacks(ConfigurableApplicationContext context, String policy) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find("atlas.gray.fallback")
			.tag("service", TrafficService.USER_SERVICE)
			.tag("policy", policy)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static Chain chain(RestClient http, long id, String version) {
		Chain chain = http.get().uri("/chain/{id}", id).headers((headers) -> {
			if (version != null) {
				headers.set(VERSION, version);
			}
		}).retrieve().body(Chain.class);
		assertThat(chain).isNotNull();
		return chain;
	}

	private static ResponseEntity<Order> order(RestClient http, long id, ClientType client, String version) {
		return http.get().uri("/orders/{id}?client={client}", id, client.id()).headers((headers) -> {
			if (version != null) {
				headers.set(VERSION, version);
			}
		})
			.exchange((request, response) -> response.getStatusCode().is2xxSuccessful()
					? ResponseEntity.ok(response.bodyTo(Order.class))
					: ResponseEntity.status(response.getStatusCode()).build());
	}

	/**
	 * A plain client of one application. Not {@code RestClient.create()}: with Apache
	 * HttpClient 5 on the classpath (Nacos brings it) that would retry every 503 once
	 * after a second, and the fallback=none checks would see each call twice.
	 */
	private static RestClient http(ConfigurableApplicationContext context) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		SimpleClientHttpRequestFactory requestFactory = new SimpleClientHttpRequestFactory();
		requestFactory.setConnectTimeout(Duration.ofSeconds(2));
		requestFactory.setReadTimeout(Duration.ofSeconds(30));
		return RestClient.builder().baseUrl("http://127.0.0.1:" + port).requestFactory(requestFactory).build();
	}

}
