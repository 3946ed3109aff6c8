package dev.atlas.eureka;

import java.util.HashMap;
import java.util.Map;

import dev.atlas.autoconfigure.affinity.CallerCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.loadbalancer.config.LoadBalancerZoneConfig;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's routing on a real (in-process) Eureka server: weights and tags from Eureka
 * metadata, the gray tag and zone Atlas writes into the registration
 * ({@code atlas.gray.own-tag}, {@code atlas.affinity.cluster}: Eureka's
 * {@code InstanceInfo} copies its metadata when the client starts, so only Atlas's Eureka
 * support makes them reach the registry), and the caller's zone from Eureka's zone
 * configuration ({@code eureka.instance.metadata-map.zone}, which Spring Cloud Netflix
 * hands to the load balancer).
 */
class EurekaRoutingIT {

	private static EurekaApps apps;

	private static ConfigurableApplicationContext light;

	private static ConfigurableApplicationContext heavy;

	private static ConfigurableApplicationContext stable;

	private static ConfigurableApplicationContext canary;

	private static ConfigurableApplicationContext zoneA;

	private static ConfigurableApplicationContext zoneB;

	private static ConfigurableApplicationContext caller;

	private static ConfigurableApplicationContext zonedCaller;

	@BeforeAll
	static void start() {
		apps = new EurekaApps();
		light = apps.start(WhoApp.class, "weighted", "eureka.instance.metadata-map.weight=1");
		heavy = apps.start(WhoApp.class, "weighted", "eureka.instance.metadata-map.weight=3");
		stable = apps.start(WhoApp.class, "tagged");
		// the tag Atlas stamps, not in Eureka's metadata-map, into an InstanceInfo built
		// before the registration
		canary = apps.start(WhoApp.class, "tagged", "atlas.gray.own-tag=canary", "app.discover-at-start=true");
		zoneA = apps.start(WhoApp.class, "zoned", "eureka.instance.metadata-map.zone=zone-a");
		// the zone Atlas stamps
		zoneB = apps.start(WhoApp.class, "zoned", "atlas.affinity.cluster=zone-b", "app.discover-at-start=true");
		caller = apps.start(WhoApp.class, "caller", "atlas.loadbalancer.strategy=smooth-round-robin",
				"atlas.warmup.enabled=false");
		zonedCaller = apps.start(WhoApp.class, "zoned-caller", "eureka.instance.metadata-map.zone=zone-a",
				"atlas.affinity.mode=strict", "app.target=zoned");
		EurekaApps.awaitInstances(caller, "weighted", 2);
		EurekaApps.awaitInstances(caller, "tagged", 2);
		EurekaApps.awaitInstances(zonedCaller, "zoned", 2);
	}

	@AfterAll
	static void stop() {
		apps.close();
	}

	@Test
	void eurekaMetadataWeightsShareTrafficOneToThree() {
		Map<Integer, Integer> answers = calls(caller, "weighted", Map.of(), 400);

		// smooth weighted round robin: exact shares, give or take the restart of its
		// sequence when a
		// registry fetch brings a new list
		assertThat(answers.get(port(light))).isBetween(96, 104);
		assertThat(answers.get(port(heavy))).isEqualTo(400 - answers.get(port(light)));
	}

	@Test
	void theGrayHeaderReachesTheInstanceTaggedThroughAtlas() {
		assertThat(metadata(caller, "tagged", canary)).containsEntry("version", "canary");

		assertThat(calls(caller, "tagged", Map.of("X-Service-Version", "canary"), 50))
			.containsOnly(Map.entry(port(canary), 50));
		assertThat(calls(caller, "tagged", Map.of(), 50)).containsOnly(Map.entry(port(stable), 50));
	}

	@Test
	void theCallerStaysInTheZoneEurekaConfigures() {
		assertThat(metadata(zonedCaller, "zoned", zoneB)).containsEntry("zone", "zone-b");

		assertThat(calls(zonedCaller, "zoned", Map.of(), 100)).containsOnly(Map.entry(port(zoneA), 100));
	}

	@Test
	void eurekasDefaultZoneOfACallerWithoutZoneIsNoCluster() {
		calls(caller, "weighted", Map.of(), 1);
		calls(zonedCaller, "zoned", Map.of(), 1);

		// Spring Cloud Netflix hands the load balancer "defaultZone" when no zone is
		// configured
		assertThat(caller.getBean(LoadBalancerZoneConfig.class).getZone()).isEqualTo("defaultZone");
		assertThat(caller.getBean(CallerCluster.class).rules().cluster()).isNull();
		assertThat(zonedCaller.getBean(CallerCluster.class).rules().cluster()).isEqualTo("zone-a");
	}

	@Test
	void registrationsCarryTheRegistrationTimeForWarmup() {
		for (ConfigurableApplicationContext provider : new ConfigurableApplicationContext[] { light, heavy }) {
			assertThat(metadata(caller, "weighted", provider)).hasEntrySatisfying("atlas.registered-at",
					(value) -> assertThat(Long.parseLong(value)).isPositive());
		}
	}

	private static Map<Integer, Integer> calls(ConfigurableApplicationContext from, String target,
			Map<String, String> headers, int count) {
		WhoApp who = from.getBean(WhoApp.class);
		Map<Integer, Integer> answers = new HashMap<>();
		for (int i = 0; i < count; i++) {
			answers.merge(Integer.parseInt(who.call(target, headers)), 1, Integer::sum);
		}
		return answers;
	}

	private static Map<String, String> metadata(ConfigurableApplicationContext from, String serviceId,
			ConfigurableApplicationContext provider) {
		int port = port(provider);
		return from.getBean(DiscoveryClient.class)
			.getInstances(serviceId)
			.stream()
			.filter((instance) -> instance.getPort() == port)
			.map(ServiceInstance::getMetadata)
			.findFirst()
			.orElseThrow();
	}

	private static int port(ConfigurableApplicationContext app) {
		return EurekaApps.port(app);
	}

}
