package dev.atlas.autoconfigure.routing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.actuator.AtlasEndpoint;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierDetector.InstanceHealth;
import dev.atlas.loadbalancer.routing.AffinityMeters;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * Proportional cluster affinity end to end, with real applications on a real (in-process)
 * ZooKeeper: two callers of the same service, one registered in zone {@code a} and one in
 * {@code b}, and six providers, two in {@code a} and four in {@code b} (Atlas's defaults
 * otherwise: proportional mode, minimum cluster size 6).
 *
 * <p>
 * Expected: the caller in {@code a} keeps {@code (2/6) / (1/2) = 2/3} of its calls in its
 * zone and sends 1/3 to {@code b}; the caller in {@code b} keeps all. Each provider then
 * serves 1/6 of all calls, and 1/6 of all calls cross a zone, the least for equal load.
 * Tolerance 3 points, over {@value #CALLS} calls of each caller: the binomial standard
 * deviation of a provider's share is 0.5 point.
 *
 * <p>
 * Then zone {@code b}'s providers fail one after the other and are ejected by the
 * {@code b} caller's outlier detection (Spring Cloud's retry on the next instance, as
 * Atlas configures it, keeps every call successful): with 3, 2 and 1 of 4 healthy, that
 * caller keeps {@code min(1, 1.4 h)} = 100 %, 70 % and 35 % local, within 5 points over
 * {@value #STEP_CALLS} calls (standard deviation 1.3 points).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProportionalAffinityIT {

	private static final String SERVICE = "provider";

	private static final int CALLS = 3000;

	private static final int STEP_CALLS = 1500;

	private static ZooKeeperApps apps;

	private static final Map<Integer, String> zoneByPort = new HashMap<>();

	private static final List<ConfigurableApplicationContext> zoneB = new ArrayList<>();

	private static final List<ConfigurableApplicationContext> providers = new ArrayList<>();

	private static ConfigurableApplicationContext callerA;

	private static ConfigurableApplicationContext callerB;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		for (int i = 0; i < 6; i++) {
			String zone = (i < 2) ? "a" : "b";
			ConfigurableApplicationContext provider = apps.start(WhoApp.class, SERVICE,
					"spring.cloud.zookeeper.discovery.metadata.zone=" + zone);
			zoneByPort.put(ZooKeeperApps.port(provider), zone);
			providers.add(provider);
			if (zone.equals("b")) {
				zoneB.add(provider);
			}
		}
		callerA = caller("a");
		callerB = caller("b");
		for (ConfigurableApplicationContext caller : List.of(callerA, callerB)) {
			ZooKeeperApps.awaitInstances(caller, SERVICE, 6);
			ZooKeeperApps.awaitInstances(caller, "caller", 2);
			// the first call starts the census; zone routing is on from the first call
			// after both callers are counted
			await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> {
				call(caller);
				return Boolean.TRUE.equals(affinity(caller).zoneRouting().get("active"));
			});
		}
	}

	private static ConfigurableApplicationContext caller(String zone) {
		return apps.start(WhoApp.class, "caller", "spring.cloud.zookeeper.discovery.metadata.zone=" + zone,
				"atlas.affinity.cluster=" + zone, "atlas.affinity.callers-refresh-interval=500ms",
				"atlas.warmup.enabled=false", "atlas.outlier.base-ejection-time=5m", "app.read-timeout=2s",
				"management.server.port=0", "management.endpoints.web.exposure.include=atlas");
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	@Test
	@Order(1)
	void everyProviderServesAnEqualShareWithTheLeastCrossZoneTraffic() {
		Map<Integer, Integer> servedBefore = served();
		int crossing = 0;
		for (int i = 0; i < CALLS; i++) {
			crossing += zoneByPort.get(call(callerA)).equals("a") ? 0 : 1;
			crossing += zoneByPort.get(call(callerB)).equals("b") ? 0 : 1;
		}
		Map<Integer, Integer> served = served();
		List<Double> shares = new ArrayList<>();
		served.forEach((port, count) -> shares.add((count - servedBefore.get(port)) / (2.0 * CALLS)));
		double crossShare = crossing / (2.0 * CALLS);
		System.out.printf("ProportionalAffinityIT: provider shares %s (zones %s), cross-zone %.3f, view a %s, b %s%n",
				shares, zoneByPort.values(), crossShare, affinity(callerA).zoneRouting(),
				affinity(callerB).zoneRouting());
		assertThat(shares).as("each provider's share of all calls")
			.allSatisfy((share) -> assertThat(share).isCloseTo(1 / 6.0, within(0.03)));
		assertThat(crossShare).as("cross-zone share: the minimum for equal load is 1/6")
			.isCloseTo(1 / 6.0, within(0.03));
		assertThat((double) affinity(callerA).zoneRouting().get("localShare")).isCloseTo(2 / 3.0, within(1e-9));
		assertThat(meters(callerA).get(AffinityMeters.LOCAL_RATIO_METER).tag("service", SERVICE).gauge().value())
			.isCloseTo(2 / 3.0, within(1e-9));
		Map<String, Object> view = callerA.getBean(AtlasEndpoint.class).service(SERVICE);
		assertThat(view).isNotNull().extractingByKey("zoneRouting").isEqualTo(affinity(callerA).zoneRouting());
		assertThat(affinity(callerA).zoneRouting()).containsEntry("callersWithoutZone", 0)
			.containsEntry("providersWithoutZone", 0);
		assertThat(meters(callerA).get(AffinityMeters.CROSS_ZONE_METER).tag("service", SERVICE).counter().count())
			.isPositive();
	}

	@Test
	@Order(2)
	void ejectingOneZonesProvidersOneByOneMovesItsTrafficGraduallyWithoutAFailedCall() {
		double[] expected = { 1.0, 0.7, 0.35 };
		double previous = 1.0;
		for (int step = 0; step < 3; step++) {
			WhoApp failing = zoneB.get(step).getBean(WhoApp.class);
			ServiceInstance instance = ZooKeeperApps.instance(callerB, SERVICE, zoneB.get(step));
			failing.fail(true);
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				call(callerB);
				InstanceHealth health = detector(callerB).health(instance);
				return health != null && health.ejected();
			});
			failing.fail(false);
			Map<Integer, Integer> servedBefore = served();
			int local = 0;
			for (int i = 0; i < STEP_CALLS; i++) {
				local += zoneByPort.get(call(callerB)).equals("b") ? 1 : 0;
			}
			Map<Integer, Integer> servedAfter = served();
			for (int ejected = 0; ejected <= step; ejected++) {
				int port = ZooKeeperApps.port(zoneB.get(ejected));
				// only the b caller calls during a step, and it ejected them
				assertThat(servedAfter.get(port) - servedBefore.get(port))
					.as("calls the b caller's ejected provider %d served", ejected)
					.isZero();
			}
			double share = local / (double) STEP_CALLS;
			System.out.printf("ProportionalAffinityIT: %d of zone b's 4 ejected, local share %.3f, view %s%n", step + 1,
					share, affinity(callerB).zoneRouting());
			assertThat((double) affinity(callerB).zoneRouting().get("localShare")).isCloseTo(expected[step],
					within(1e-9));
			assertThat(share).as("local share with %d of 4 ejected", step + 1).isCloseTo(expected[step], within(0.05));
			assertThat(previous - share).as("a step moves the share gradually").isLessThanOrEqualTo(0.40);
			previous = share;
		}
	}

	/**
	 * One call through the caller's load-balanced RestTemplate; any failure fails the
	 * test.
	 */
	private static int call(ConfigurableApplicationContext caller) {
		return Integer.parseInt(caller.getBean(WhoApp.class).call("rest-template"));
	}

	private static Map<Integer, Integer> served() {
		Map<Integer, Integer> served = new HashMap<>();
		for (ConfigurableApplicationContext provider : providers) {
			served.put(ZooKeeperApps.port(provider), provider.getBean(WhoApp.class).served());
		}
		return served;
	}

	private static ClusterAffinity affinity(ConfigurableApplicationContext caller) {
		return caller.getBean(LoadBalancerClientFactory.class).getInstance(SERVICE, ClusterAffinity.class);
	}

	private static OutlierDetector detector(ConfigurableApplicationContext caller) {
		return caller.getBean(LoadBalancerClientFactory.class).getInstance(SERVICE, OutlierDetector.class);
	}

	private static MeterRegistry meters(ConfigurableApplicationContext caller) {
		return caller.getBean(MeterRegistry.class);
	}

}
