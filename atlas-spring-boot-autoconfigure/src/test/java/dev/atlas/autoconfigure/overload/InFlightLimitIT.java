package dev.atlas.autoconfigure.overload;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerClientConfiguration;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-instance in-flight limit with real applications on a real (in-process)
 * ZooKeeper: two providers that take 100 ms per request, a caller with
 * {@code max-in-flight-per-instance=3} and 16 threads calling at once through each
 * client. Asserted from the providers' side: neither ever serves more than 3 of the
 * caller's requests at once; the requests that found both full failed at once with the
 * reason saturated, were not retried (every request the providers served succeeded) and
 * were counted.
 */
class InFlightLimitIT {

	private static final int LIMIT = 3;

	private static final int THREADS = 16;

	private static final int CALLS_PER_THREAD = 6;

	private static ZooKeeperApps apps;

	private static List<ConfigurableApplicationContext> providers;

	private static ConfigurableApplicationContext caller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		providers = List.of(apps.start(WhoApp.class, "slow", "app.delay=100ms"),
				apps.start(WhoApp.class, "slow", "app.delay=100ms"));
		caller = apps.start(WhoApp.class, "slow-caller", "app.target=slow", "atlas.warmup.enabled=false",
				"atlas.loadbalancer.max-in-flight-per-instance=" + LIMIT,
				"spring.cloud.loadbalancer.retry.retry-on-all-exceptions=true");
		ZooKeeperApps.awaitInstances(caller, "slow", 2);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static int served() {
		return providers.stream().mapToInt((p) -> p.getBean(WhoApp.class).served()).sum();
	}

	private static double saturated() {
		FunctionCounter counter = caller.getBean(MeterRegistry.class)
			.find(AtlasLoadBalancerClientConfiguration.SATURATED_METER)
			.tag("service", "slow")
			.functionCounter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * Every client; retry on every exception, so that a saturated request would be
	 * retried if Atlas allowed it.
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rest-template", "rest-client", "web-client", "feign" })
	void noInstanceEverServesMoreThanTheLimitOfOneCaller(String client) throws Exception {
		int servedBefore = served();
		double saturatedBefore = saturated();
		ExecutorService pool = Executors.newFixedThreadPool(THREADS);
		List<Future<int[]>> results = new ArrayList<>();
		try {
			Callable<int[]> calls = () -> {
				int ok = 0;
				int full = 0;
				for (int i = 0; i < CALLS_PER_THREAD; i++) {
					try {
						caller.getBean(WhoApp.class).call(client);
						ok++;
					}
					catch (RuntimeException ex) {
						if (client.equals("feign")) {
							// Feign wraps what its client throws
							assertThat(NoInstanceAvailableException.isSaturated(ex))
								.as("only saturated requests fail: %s", ex)
								.isTrue();
						}
						else {
							assertThat(ex).as("failed at once with Atlas's error, not retried")
								.isInstanceOfSatisfying(NoInstanceAvailableException.class,
										(none) -> assertThat(none.reason()).isEqualTo(NoInstanceReason.SATURATED));
						}
						full++;
					}
				}
				return new int[] { ok, full };
			};
			for (int t = 0; t < THREADS; t++) {
				results.add(pool.submit(calls));
			}
			int ok = 0;
			int full = 0;
			for (Future<int[]> result : results) {
				int[] counts = result.get();
				ok += counts[0];
				full += counts[1];
			}
			for (ConfigurableApplicationContext provider : providers) {
				assertThat(provider.getBean(WhoApp.class).maxInFlight()).as("at most the limit at once")
					.isBetween(1, LIMIT);
			}
			assertThat(full).as("16 callers over 2 × 3 slots").isPositive();
			assertThat(served() - servedBefore).as("each served request succeeded: none was retried").isEqualTo(ok);
			assertThat(saturated() - saturatedBefore).isEqualTo(full);
		}
		finally {
			pool.shutdownNow();
		}
	}

}
