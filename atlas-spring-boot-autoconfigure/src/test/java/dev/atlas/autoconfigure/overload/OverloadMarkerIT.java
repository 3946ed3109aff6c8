package dev.atlas.autoconfigure.overload;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.overload.RetryBudget;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.web.client.HttpStatusCodeException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The overload marker across two hops of real applications on a real (in-process)
 * ZooKeeper: a top caller calls {@code middle} (two instances), whose {@code /relay}
 * calls {@code failing} (two instances answering 503) and passes the 503 on. While the
 * middle service's retry budget allows its retry, its 503 is unmarked and the top caller
 * retries it on the other middle instance (two relays per request); once the middle
 * service's budget refuses every retry, its 503 says
 * {@value OverloadMarks#HEADER}{@code : true} and the top caller does not retry it (one
 * relay per request), at no cost to its budget.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OverloadMarkerIT {

	private static final int REQUESTS = 10;

	private static final String RATIO = "atlas.retry.budget.ratio";

	private static final String MINIMUM = "atlas.retry.budget.min-retries-per-second";

	private static ZooKeeperApps apps;

	private static List<ConfigurableApplicationContext> middles;

	/** Calls the middle service's {@code /relay}. */
	private static ConfigurableApplicationContext top;

	/** Calls the middle service's {@code /who}. */
	private static ConfigurableApplicationContext plainTop;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		apps.start(WhoApp.class, "failing", "app.fail=true");
		apps.start(WhoApp.class, "failing", "app.fail=true");
		middles = List.of(middle(), middle());
		top = apps.start(WhoApp.class, "top", "app.target=middle", "app.path=/relay", "atlas.warmup.enabled=false",
				"atlas.outlier.enabled=false");
		plainTop = apps.start(WhoApp.class, "plain-top", "app.target=middle", "atlas.warmup.enabled=false",
				"atlas.outlier.enabled=false");
		ZooKeeperApps.awaitInstances(top, "middle", 2);
		ZooKeeperApps.awaitInstances(plainTop, "middle", 2);
		for (ConfigurableApplicationContext middle : middles) {
			ZooKeeperApps.awaitInstances(middle, "failing", 2);
		}
	}

	private static ConfigurableApplicationContext middle() {
		return apps.start(WhoApp.class, "middle", "app.target=failing", "app.fail=true", "atlas.warmup.enabled=false",
				"atlas.outlier.enabled=false");
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	/**
	 * Calls served by the middle service's instances: its {@code /who} and
	 * {@code /relay}.
	 */
	private static int middleCalls() {
		return middles.stream()
			.mapToInt((m) -> m.getBean(WhoApp.class).relayed() + m.getBean(WhoApp.class).served())
			.sum();
	}

	/**
	 * Requests of {@code caller} through {@code client}; the calls of the middle service
	 * they cost, and the marker header seen.
	 */
	private static int calls(ConfigurableApplicationContext caller, String client, Set<String> markers) {
		int before = middleCalls();
		for (int i = 0; i < REQUESTS; i++) {
			Throwable failure = catchThrowable(() -> caller.getBean(WhoApp.class).call(client));
			if (failure instanceof HttpStatusCodeException status && status.getResponseHeaders() != null) {
				markers.add(String.valueOf(status.getResponseHeaders().getFirst(OverloadMarks.HEADER)));
			}
			else if (failure instanceof WebClientResponseException status) {
				markers.add(String.valueOf(status.getHeaders().getFirst(OverloadMarks.HEADER)));
			}
			else {
				markers.add("failure: " + failure);
			}
		}
		return middleCalls() - before;
	}

	private static long refusedByMiddles() {
		return middles.stream()
			.mapToLong((m) -> m.getBean(LoadBalancerClientFactory.class)
				.getInstance("failing", RetryBudget.class)
				.exhausted())
			.sum();
	}

	private static void middleBudget(String ratio, String minimum) {
		for (ConfigurableApplicationContext middle : middles) {
			middle.getEnvironment().getPropertySources().remove("budget-change");
			middle.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("budget-change", Map.of(RATIO, ratio, MINIMUM, minimum)));
			middle.publishEvent(new EnvironmentChangeEvent(middle, Set.of(RATIO, MINIMUM)));
		}
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-client", "rest-template", "web-client" })
	@Order(1)
	void aMiddleServicesOwn503IsRetriedByTheCallerAbove(String client) {
		Set<String> markers = new HashSet<>();
		assertThat(calls(plainTop, client, markers)).as("each request retried on the other middle instance")
			.isEqualTo(2 * REQUESTS);
		assertThat(markers).containsExactly("null");
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-client", "rest-template", "web-client" })
	@Order(2)
	void a503TheMiddleServiceRetriedInVainIsNotRetriedAbove(String client) {
		Set<String> markers = new HashSet<>();
		assertThat(calls(top, client, markers)).as("no retry of a marked answer").isEqualTo(REQUESTS);
		assertThat(markers).containsExactly("true");
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-client", "rest-template", "web-client" })
	@Order(3)
	void a503WhoseRetryTheMiddleServicesBudgetRefusedIsNotRetriedAbove(String client) {
		middleBudget("0", "0");
		long refusedBefore = refusedByMiddles();
		Set<String> markers = new HashSet<>();
		assertThat(calls(top, client, markers)).as("no retry of a marked answer").isEqualTo(REQUESTS);
		assertThat(markers).containsExactly("true");
		assertThat(refusedByMiddles() - refusedBefore).as("every retry of the middle service refused")
			.isEqualTo(REQUESTS);
	}

}
