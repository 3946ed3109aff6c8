package dev.atlas.autoconfigure.retry;

import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.overload.OverloadClientConfiguration;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The retry budget with real applications on a real (in-process) ZooKeeper: both
 * providers of {@code failing} answer 503 to every request, so every request asks for its
 * retry. The budgeted caller allows retries for 20 % of its requests and no minimum
 * ({@code min-retries-per-second=0}), so that the count is exact, over a window of 1 min
 * (slices of 6 s, so that the 50 requests of a case cross at most one slice's edge); the
 * unbounded one has the budget off, as Spring Cloud has no budget. The runtime change,
 * which spends the budget, runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RetryBudgetIT {

	private static final int REQUESTS = 50;

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	private static ConfigurableApplicationContext budgeted;

	private static ConfigurableApplicationContext unbounded;

	/** Calls {@code gone}, whose two instances refuse connections. */
	private static ConfigurableApplicationContext goneCaller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		first = apps.start(WhoApp.class, "failing", "app.fail=true");
		second = apps.start(WhoApp.class, "failing", "app.fail=true");
		List<ConfigurableApplicationContext> gone = List.of(apps.start(WhoApp.class, "gone"),
				apps.start(WhoApp.class, "gone"));
		budgeted = caller("failing", "atlas.retry.budget.min-retries-per-second=0", "atlas.retry.budget.window=1m");
		unbounded = caller("failing", "atlas.retry.budget.enabled=false");
		goneCaller = caller("gone", "atlas.retry.budget.min-retries-per-second=0");
		ZooKeeperApps.awaitInstances(budgeted, "failing", 2);
		ZooKeeperApps.awaitInstances(unbounded, "failing", 2);
		ZooKeeperApps.awaitInstances(goneCaller, "gone", 2);
		// Both instances of gone stop serving and stay registered: every connection to
		// them is refused.
		for (ConfigurableApplicationContext instance : gone) {
			((WebServerApplicationContext) instance).getWebServer().stop();
		}
	}

	private static ConfigurableApplicationContext caller(String target, String... budget) {
		// No outlier detection: it would eject the failing providers, and the counts
		// would measure it instead of the budget.
		List<String> properties = new ArrayList<>(
				List.of("app.target=" + target, "atlas.warmup.enabled=false", "atlas.outlier.enabled=false"));
		properties.addAll(List.of(budget));
		return apps.start(WhoApp.class, target + "-caller", properties.toArray(String[]::new));
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	/** Requests made by {@code caller} through {@code client}; the attempts they cost. */
	private static int attempts(ConfigurableApplicationContext caller, String client, int requests) {
		int before = served();
		for (int i = 0; i < requests; i++) {
			try {
				caller.getBean(WhoApp.class).call(client);
			}
			catch (RuntimeException expected) {
				// the 503, or Spring Cloud's wrapping of it
			}
		}
		return served() - before;
	}

	private static int served() {
		return first.getBean(WhoApp.class).served() + second.getBean(WhoApp.class).served();
	}

	/** The caller's count of refused retries; 0 before its first call to the service. */
	private static double exhausted(ConfigurableApplicationContext caller) {
		return exhausted(caller, "failing");
	}

	private static double exhausted(ConfigurableApplicationContext caller, String service) {
		FunctionCounter counter = caller.getBean(MeterRegistry.class)
			.find(OverloadClientConfiguration.EXHAUSTED_METER)
			.tag("service", service)
			.functionCounter();
		return (counter != null) ? counter.count() : 0;
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template", "rest-client", "web-client", "feign" })
	@Order(1)
	void retriesStayWithinTheBudgetAndTheRefusedOnesAreCounted(String client) {
		double refusedBefore = exhausted(budgeted);
		int attempts = attempts(budgeted, client, REQUESTS);
		// 50 requests, one retry for every 5 of them (ratio 0.2): 60 attempts; what an
		// earlier client left of the balance is below one retry, and so is what the edge
		// of a 6 s slice of the budget's window, when the requests cross one, loses
		assertThat(attempts).isBetween(REQUESTS + 9, REQUESTS + 11);
		assertThat(exhausted(budgeted) - refusedBefore).isBetween(REQUESTS - 11.0, REQUESTS - 9.0);
	}

	/**
	 * A retry after a refused connection that the budget refuses is not made: the caller
	 * gets the refused connection, in its client's usual wrapping.
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template, org.springframework.web.client.ResourceAccessException",
			"rest-client, org.springframework.web.client.ResourceAccessException",
			"web-client, java.lang.RuntimeException", "feign, feign.RetryableException" })
	@Order(1)
	void aRefusedRetryAfterAnExceptionGivesTheCallerThatException(String client, Class<?> type) {
		double refusedBefore = exhausted(goneCaller, "gone");
		for (int i = 0; i < 20; i++) {
			// the JDK's client wraps the refusal's ClosedChannelException in a
			// ConnectException
			assertThatThrownBy(() -> goneCaller.getBean(WhoApp.class).call(client)).isInstanceOf(type)
				.satisfies((failure) -> assertThat(causes(failure)).hasAtLeastOneElementOfType(ConnectException.class));
		}
		// 20 requests, ratio 0.2, no minimum: 4 retries made (each refused again by the
		// other instance), 16 refused
		assertThat(exhausted(goneCaller, "gone") - refusedBefore).isBetween(15.0, 17.0);
	}

	private static List<Throwable> causes(Throwable failure) {
		List<Throwable> chain = new ArrayList<>();
		for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
			chain.add(t);
		}
		return chain;
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template", "rest-client", "web-client", "feign" })
	void withoutTheBudgetEveryRequestIsRetried(String client) {
		assertThat(attempts(unbounded, client, REQUESTS)).isEqualTo(2 * REQUESTS);
		assertThat(exhausted(unbounded)).isZero();
	}

	@Test
	@Order(2)
	void aNewRatioAppliesAtRuntime() {
		String key = "atlas.services.failing.retry.budget.ratio";
		budgeted.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("retry-budget-change", Map.of(key, "1.0")));
		try {
			budgeted.publishEvent(new EnvironmentChangeEvent(budgeted, Set.of(key)));
			// every request now earns a retry (with no minimum, a request whose retry is
			// asked in the budget's next slice finds that slice's own requests only, none
			// yet if it is the first: one such request at most, as 50 take well under the
			// slice's 6 s)
			assertThat(attempts(budgeted, "rest-template", REQUESTS)).isBetween(2 * REQUESTS - 1, 2 * REQUESTS);
		}
		finally {
			budgeted.getEnvironment().getPropertySources().remove("retry-budget-change");
			budgeted.publishEvent(new EnvironmentChangeEvent(budgeted, Set.of(key)));
		}
	}

}
