package dev.atlas.autoconfigure.retry;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.HttpServerErrorException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Retry on another instance, with real applications on a real (in-process) ZooKeeper:
 * provider A always answers 503, B answers 200; 503 is retryable (Atlas's default) and
 * Spring Cloud retries once on the next instance.
 *
 * <p>
 * Every client is covered. The load-balanced {@code RestClient} of the test applications
 * runs on the JDK's {@code HttpClient}: on Apache HttpClient 5, Spring Boot's default
 * when it is on the class path, the transport itself re-sends a 503 after 1 s (its
 * {@code DefaultHttpRequestRetryStrategy}, POST included), under Spring Cloud's retry,
 * and an only-503 service is hit 4 times instead of 2.
 */
class RetryIT {

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext providerA;

	private static ConfigurableApplicationContext providerB;

	private static ConfigurableApplicationContext weightedRandomCaller;

	private static ConfigurableApplicationContext smoothRoundRobinCaller;

	private static ConfigurableApplicationContext killedCaller;

	private static String killedPort;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		providerA = app("provider", "app.fail=true", "app.answer=A");
		providerB = app("provider", "app.fail=false", "app.answer=B");
		// Case 03 is about retries: outlier detection would eject A (always 503) at its
		// fifth 503, and the later cases on the same caller would never reach it
		// (OutlierRecoveryIT covers that).
		weightedRandomCaller = app("caller", "atlas.loadbalancer.strategy=weighted-random",
				"atlas.outlier.enabled=false");
		smoothRoundRobinCaller = app("caller", "atlas.loadbalancer.strategy=smooth-round-robin",
				"atlas.outlier.enabled=false");
		for (ConfigurableApplicationContext caller : List.of(weightedRandomCaller, smoothRoundRobinCaller)) {
			ZooKeeperApps.awaitInstances(caller, "provider", 2);
		}
		// Three instances of "victim"; the web server of the first is stopped while its
		// registration stays (a killed process until the registry notices): its port
		// refuses connections, and every caller still lists it.
		List<ConfigurableApplicationContext> victims = List.of(app("victim"), app("victim"), app("victim"));
		killedCaller = app("victim-caller", "app.target=victim");
		ZooKeeperApps.awaitInstances(killedCaller, "victim", 3);
		for (String client : List.of("rest-template", "rest-client", "web-client", "feign")) {
			killedCaller.getBean(WhoApp.class).call(client);
		}
		killedPort = String.valueOf(ZooKeeperApps.port(victims.get(0)));
		((WebServerApplicationContext) victims.get(0)).getWebServer().stop();
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static ConfigurableApplicationContext app(String name, String... properties) {
		String[] all = new String[properties.length + 1];
		all[0] = "atlas.warmup.enabled=false";
		System.arraycopy(properties, 0, all, 1, properties.length);
		return apps.start(WhoApp.class, name, all);
	}

	private static int served(ConfigurableApplicationContext provider) {
		return provider.getBean(WhoApp.class).served();
	}

	@ParameterizedTest(name = "{0} through {1}")
	@CsvSource({ "weighted-random, rest-template", "weighted-random, rest-client", "weighted-random, web-client",
			"weighted-random, feign", "smooth-round-robin, rest-template", "smooth-round-robin, rest-client",
			"smooth-round-robin, web-client", "smooth-round-robin, feign" })
	void retriesGoToTheOtherInstanceAndNoRequestFails(String strategy, String client) throws Exception {
		ConfigurableApplicationContext caller = "weighted-random".equals(strategy) ? weightedRandomCaller
				: smoothRoundRobinCaller;
		WhoApp calls = caller.getBean(WhoApp.class);
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

	/**
	 * A killed provider costs no call: one of three providers is killed (connection
	 * refused, still registered); 60 concurrent GETs through each client all succeed, on
	 * the two live instances: a connect failure is retried on another instance for
	 * WebClient as for RestTemplate, RestClient and Feign (WebClient's retrying filter
	 * needs {@code spring.cloud.loadbalancer.retry.enabled=true}, which Atlas sets by
	 * default).
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template", "rest-client", "web-client", "feign" })
	void aKilledProviderFailsNoRequestOfAnyClient(String client) throws Exception {
		WhoApp calls = killedCaller.getBean(WhoApp.class);
		ExecutorService pool = Executors.newFixedThreadPool(20);
		List<String> failures = new ArrayList<>();
		List<String> answers = new ArrayList<>();
		try {
			List<Future<String>> results = new ArrayList<>();
			for (int i = 0; i < 60; i++) {
				results.add(pool.submit((Callable<String>) () -> calls.call(client)));
			}
			for (Future<String> result : results) {
				try {
					answers.add(result.get());
				}
				catch (ExecutionException ex) {
					failures.add(String.valueOf(ex.getCause()));
				}
			}
		}
		finally {
			pool.shutdown();
		}
		assertThat(failures).as("failed calls through " + client).isEmpty();
		assertThat(answers).hasSize(60).doesNotContain(killedPort);
		assertThat(Set.copyOf(answers)).as("both live instances serve").hasSize(2);
	}

	/**
	 * A POST whose connection is refused never reached the server: it is requeued on
	 * another instance (Finagle's requeue), though Spring Cloud retries only GET.
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template", "rest-client", "web-client", "feign" })
	void aPostWhoseConnectionIsRefusedSucceedsOnAnotherInstance(String client) throws Exception {
		WhoApp calls = killedCaller.getBean(WhoApp.class);
		List<String> answers = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			answers.add(calls.post(client));
		}
		assertThat(answers).hasSize(30).doesNotContain(killedPort);
	}

	/**
	 * A POST that reached the server and failed is not retried: only idempotent methods
	 * are (Spring Cloud's rule, kept).
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template", "rest-client", "web-client", "feign" })
	void aPostThatFailedOnTheServerIsNotRetried(String client) throws Exception {
		ConfigurableApplicationContext caller = weightedRandomCaller;
		int before = served(providerA) + served(providerB);
		int failed = 0;
		for (int i = 0; i < 20; i++) {
			try {
				caller.getBean(WhoApp.class).post(client);
			}
			catch (RuntimeException ex) {
				failed++;
			}
		}
		assertThat(failed).as("POSTs that landed on A, which answers 503").isPositive();
		assertThat(served(providerA) + served(providerB) - before).isEqualTo(20);
	}

	@Test
	void withOnlyAThe503ReachesTheCallerNotNoInstanceAvailable() throws Exception {
		ConfigurableApplicationContext onlyA = app("lonely", "app.fail=true");
		ConfigurableApplicationContext caller = app("lonely-caller", "app.target=lonely");
		ZooKeeperApps.awaitInstances(caller, "lonely", 1);
		assertThatThrownBy(() -> caller.getBean(WhoApp.class).call("rest-template"))
			.isInstanceOf(HttpServerErrorException.class)
			.hasMessageContaining("503");
		assertThat(onlyA.getBean(WhoApp.class).served()).isEqualTo(2);
	}

}
