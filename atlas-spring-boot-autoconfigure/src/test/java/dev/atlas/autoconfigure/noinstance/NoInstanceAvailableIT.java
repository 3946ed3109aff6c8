package dev.atlas.autoconfigure.noinstance;

import java.util.Map;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * With real applications on a real (in-process) ZooKeeper: what a caller sees when no
 * instance is available, through every client, with Spring Cloud's retry on (Atlas's
 * default) and off: a {@link NoInstanceAvailableException} naming the service and the
 * reason, and Spring Cloud's {@code loadbalancer.requests.discard} meter still counts the
 * request, exactly once (a retry does not retry it: one attempt).
 */
class NoInstanceAvailableIT {

	private static ZooKeeperApps apps;

	private static Map<Boolean, ConfigurableApplicationContext> callers;

	private static ConfigurableApplicationContext grayCaller;

	private static ConfigurableApplicationContext zeroWeightCaller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		ConfigurableApplicationContext untagged = apps.start(WhoApp.class, "untagged");
		ConfigurableApplicationContext drained = apps.start(WhoApp.class, "drained",
				"spring.cloud.zookeeper.discovery.metadata.weight=0");
		// Spring Cloud's loadbalancer.requests.* meters are opt-in (as in Spring Cloud).
		String stats = "spring.cloud.loadbalancer.stats.micrometer.enabled=true";
		callers = Map.of(true, apps.start(WhoApp.class, "ghost-caller", "app.target=ghost", stats), false,
				apps.start(WhoApp.class, "ghost-caller", "app.target=ghost", stats,
						"spring.cloud.loadbalancer.retry.enabled=false"));
		grayCaller = apps.start(WhoApp.class, "gray-caller", "app.target=untagged", "atlas.gray.own-tag=v9",
				"atlas.gray.fallback=none");
		zeroWeightCaller = apps.start(WhoApp.class, "zero-caller", "app.target=drained",
				"atlas.loadbalancer.all-zero-weights=reject");
		ZooKeeperApps.awaitInstances(grayCaller, "untagged", 1);
		ZooKeeperApps.awaitInstances(zeroWeightCaller, "drained", 1);
		assertThat(untagged.isActive() && drained.isActive()).isTrue();
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static double discarded(ConfigurableApplicationContext caller) {
		return caller.getBean(MeterRegistry.class)
			.find("loadbalancer.requests.discard")
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	@ParameterizedTest(name = "{0}, retry {1}")
	@CsvSource({ "rest-template, true", "rest-template, false", "rest-client, true", "rest-client, false",
			"web-client, true", "web-client, false", "feign, true", "feign, false" })
	void everyClientSeesTheServiceAndTheReason(String client, boolean retry) {
		ConfigurableApplicationContext caller = callers.get(retry);
		double discardedBefore = discarded(caller);
		Throwable thrown = catchThrowable(() -> caller.getBean(WhoApp.class).call(client));
		assertThat(thrown).isInstanceOf(NoInstanceAvailableException.class)
			.hasMessage("No instances available for ghost: the registry lists no instance of it");
		NoInstanceAvailableException none = (NoInstanceAvailableException) thrown;
		assertThat(none.serviceId()).isEqualTo("ghost");
		assertThat(none.reason()).isEqualTo(NoInstanceReason.NO_INSTANCES);
		// a retry does not retry it: one attempt, so exactly one DISCARD
		assertThat(discarded(caller)).as("loadbalancer.requests.discard").isEqualTo(discardedBefore + 1);
	}

	@Test
	void aTagNobodyRunsWithFallbackNoneSaysSo() {
		for (String client : new String[] { "rest-template", "rest-client", "web-client", "feign" }) {
			assertThat(catchThrowable(() -> grayCaller.getBean(WhoApp.class).call(client))).as(client)
				.isInstanceOf(NoInstanceAvailableException.class)
				.hasMessage("No instances available for untagged: no instance has the requested gray tag and "
						+ "atlas.gray.fallback is none");
		}
	}

	@Test
	void allWeightsZeroWithRejectSaysSo() {
		for (String client : new String[] { "rest-template", "rest-client", "web-client", "feign" }) {
			assertThat(catchThrowable(() -> zeroWeightCaller.getBean(WhoApp.class).call(client))).as(client)
				.isInstanceOf(NoInstanceAvailableException.class)
				.hasMessage("No instances available for drained: every candidate has weight 0 and "
						+ "atlas.loadbalancer.all-zero-weights is reject");
		}
	}

}
