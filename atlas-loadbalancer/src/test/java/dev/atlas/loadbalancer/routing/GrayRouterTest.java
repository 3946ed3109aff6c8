package dev.atlas.loadbalancer.routing;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

@ExtendWith(OutputCaptureExtension.class)
class GrayRouterTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final SplittableRandom random = new SplittableRandom(7);

	/** A baseline and a canary: S1, S2 untagged, C1 tagged v2. */
	private final InstanceSnapshot fleet = InstanceSnapshot.of(
			List.of(instance("S1"), instance("S2"), instance("C1", "version", "v2")),
			new InstanceAttributesParser(SERVICE, "version", this.meters));

	private GrayRouter router(GrayFallback fallback, Map<String, Double> percentages, String hashKeyHeader) {
		return new GrayRouter(SERVICE,
				new GrayRules("X-Service-Version", null, fallback, true, Set.of(), percentages, hashKeyHeader),
				this.meters);
	}

	private GrayRouter router(GrayFallback fallback) {
		return router(fallback, Map.of(), null);
	}

	private static List<String> ids(List<ServiceInstance> lane) {
		return lane.stream().map(ServiceInstance::getInstanceId).toList();
	}

	private double fallbacks(String policy) {
		return this.meters.counter("atlas.gray.fallback", "service", SERVICE, "policy", policy).count();
	}

	@Test
	void wantedTagGoesToItsInstancesOnlyAnyCase() {
		GrayRouter router = router(GrayFallback.BASELINE);
		assertThat(ids(router.route(this.fleet, "v2", null, this.random))).containsExactly("C1");
		assertThat(ids(router.route(this.fleet, " V2 ", null, this.random))).containsExactly("C1");
	}

	@Test
	void noTagGoesToBaselineOnlyNeverToTheCanary() {
		GrayRouter router = router(GrayFallback.BASELINE);
		assertThat(ids(router.route(this.fleet, null, null, this.random))).containsExactly("S1", "S2");
		assertThat(ids(router.route(this.fleet, "", null, this.random))).containsExactly("S1", "S2");
	}

	@Test
	void unknownTagFallsBackToBaselineAndCountsWithOneWarn(CapturedOutput output) {
		GrayRouter router = router(GrayFallback.BASELINE);
		for (int i = 0; i < 3; i++) {
			assertThat(ids(router.route(this.fleet, "v3", null, this.random))).containsExactly("S1", "S2");
		}
		assertThat(fallbacks("baseline")).isEqualTo(3);
		assertThat(output.getOut().lines().filter((line) -> line.contains("has tag 'v3'"))).hasSize(1);
	}

	@Test
	void unknownTagWithFallbackNoneGetsNothing() {
		assertThat(router(GrayFallback.NONE).route(this.fleet, "v3", null, this.random)).isEmpty();
		assertThat(fallbacks("none")).isEqualTo(1);
	}

	@Test
	void unknownTagWithFallbackAllGetsEveryInstance() {
		assertThat(ids(router(GrayFallback.ALL).route(this.fleet, "v3", null, this.random))).containsExactly("S1", "S2",
				"C1");
	}

	@Test
	void tenPercentCanaryOverTenThousandUntaggedRequests() {
		// Seeded; expected 1,000, sigma 30 requests; tolerance +-2 % of 10,000 = 200.
		GrayRouter router = router(GrayFallback.BASELINE, Map.of("v2", 10.0), null);
		int canary = 0;
		for (int i = 0; i < 10_000; i++) {
			if (ids(router.route(this.fleet, null, null, this.random)).equals(List.of("C1"))) {
				canary++;
			}
		}
		assertThat(canary).isBetween(800, 1_200);
	}

	@Test
	void eachPercentageDrawIsCountedByTheLaneItWentToAndTheTargetIsPublished() {
		GrayRouter router = router(GrayFallback.BASELINE, Map.of("v2", 10.0), null);
		int canary = 0;
		for (int i = 0; i < 10_000; i++) {
			if (ids(router.route(this.fleet, null, null, this.random)).equals(List.of("C1"))) {
				canary++;
			}
		}
		// a tagged request is no draw
		router.route(this.fleet, "v2", null, this.random);

		assertThat(canaryDraws("v2")).isEqualTo(canary);
		assertThat(canaryDraws("baseline")).isEqualTo(10_000 - canary);
		assertThat(this.meters.get("atlas.gray.canary.target").tag("lane", "v2").gauge().value()).isEqualTo(0.10);
	}

	@Test
	void aDrawForACanaryWithoutInstancesStaysOnTheBaselineAndCountsThere() {
		GrayRouter router = router(GrayFallback.BASELINE, Map.of("v9", 50.0), null);
		for (int i = 0; i < 100; i++) {
			assertThat(ids(router.route(this.fleet, null, null, this.random))).containsExactly("S1", "S2");
		}

		assertThat(canaryDraws("v9")).isZero();
		assertThat(canaryDraws("baseline")).isEqualTo(100);
	}

	@Test
	void canarySeriesFollowTheRulesInForce() {
		CanaryMeters canaries = new CanaryMeters(SERVICE, this.meters);
		GrayRouter first = new GrayRouter(SERVICE, new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true,
				Set.of(), Map.of("v2", 10.0), null), this.meters, canaries);
		assertThat(lanes()).as("nothing before it is in force").isEmpty();
		first.putInForce();
		first.route(this.fleet, null, null, this.random);
		assertThat(lanes()).containsExactlyInAnyOrder("v2", "baseline");

		// prepared for rules that are not in force (yet): no series of its own, the
		// target
		// still 10 %
		GrayRouter next = new GrayRouter(SERVICE, new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true,
				Set.of(), Map.of("v3", 50.0), null), this.meters, first.canaryMeters());
		assertThat(lanes()).containsExactlyInAnyOrder("v2", "baseline");
		assertThat(canaries.target("v2")).isEqualTo(0.10);
		next.putInForce();

		assertThat(lanes()).containsExactlyInAnyOrder("v3", "baseline");
		assertThat(this.meters.find("atlas.gray.canary.target").gauges()).singleElement()
			.satisfies((gauge) -> assertThat(gauge.getId().getTag("lane")).isEqualTo("v3"))
			.satisfies((gauge) -> assertThat(gauge.value()).isEqualTo(0.50));

		canaries.inForce(Map.of());
		assertThat(this.meters.find("atlas.gray.canary").meters()).isEmpty();
		assertThat(this.meters.find("atlas.gray.canary.target").meters()).isEmpty();
	}

	@Test
	void closingRemovesEverySeries() {
		GrayRouter router = router(GrayFallback.BASELINE, Map.of("v2", 10.0), null);
		router.route(this.fleet, null, null, this.random);

		router.canaryMeters().close();

		assertThat(this.meters.find("atlas.gray.canary").meters()).isEmpty();
		assertThat(this.meters.find("atlas.gray.canary.target").meters()).isEmpty();
	}

	private double canaryDraws(String lane) {
		return this.meters.counter("atlas.gray.canary", "service", SERVICE, "lane", lane).count();
	}

	private List<String> lanes() {
		return this.meters.find("atlas.gray.canary")
			.counters()
			.stream()
			.map((counter) -> counter.getId().getTag("lane"))
			.toList();
	}

	@Test
	void hashKeyMakesTheLaneSticky() {
		GrayRouter router = router(GrayFallback.BASELINE, Map.of("v2", 10.0), "X-User-Id");
		Map<String, List<String>> first = new HashMap<>();
		int canary = 0;
		for (int user = 0; user < 10_000; user++) {
			List<String> lane = ids(router.route(this.fleet, null, "user-" + user, this.random));
			first.put("user-" + user, lane);
			if (lane.equals(List.of("C1"))) {
				canary++;
			}
		}
		// 10,000 distinct keys hash to about 10 %: tolerance +-2 points.
		assertThat(canary / 10_000.0).isCloseTo(0.10, within(0.02));
		for (int repeat = 0; repeat < 3; repeat++) {
			for (int user = 0; user < 10_000; user += 7) {
				assertThat(ids(router.route(this.fleet, null, "user-" + user, this.random)))
					.isEqualTo(first.get("user-" + user));
			}
		}
	}

	@Test
	void percentageToATagWithoutInstancesStaysOnBaseline() {
		GrayRouter router = router(GrayFallback.BASELINE, Map.of("v9", 100.0), null);
		assertThat(ids(router.route(this.fleet, null, null, this.random))).containsExactly("S1", "S2");
	}

	@Test
	void baselineTagsAndNoBaselineAtAll() {
		InstanceSnapshot tagged = InstanceSnapshot.of(
				List.of(instance("B1", "version", "v1"), instance("C1", "version", "v2")),
				new InstanceAttributesParser(SERVICE, "version", this.meters));
		GrayRouter withV1Baseline = new GrayRouter(SERVICE,
				new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true, Set.of("V1"), Map.of(), null),
				this.meters);
		assertThat(ids(withV1Baseline.route(tagged, null, null, this.random))).containsExactly("B1");
		assertThat(ids(withV1Baseline.route(tagged, "v3", null, this.random))).containsExactly("B1");
		// Without a baseline tag nothing is baseline: untagged requests go to all rather
		// than nowhere.
		assertThat(ids(router(GrayFallback.BASELINE).route(tagged, null, null, this.random))).containsExactly("B1",
				"C1");
	}

	@Test
	void notIsolatedBaselineSendsUntaggedRequestsToAll() {
		GrayRouter router = new GrayRouter(SERVICE,
				new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, false, Set.of(), Map.of(), null),
				this.meters);
		assertThat(router.route(this.fleet, null, null, this.random)).hasSize(3);
	}

	@Test
	void theSameSnapshotAndTagGiveTheSameLaneObject() {
		GrayRouter router = router(GrayFallback.BASELINE);
		assertThat(router.route(this.fleet, "v2", null, this.random))
			.isSameAs(router.route(this.fleet, "v2", null, this.random));
		assertThat(router.route(this.fleet, null, null, this.random))
			.isSameAs(router.route(this.fleet, null, null, this.random));
	}

	@Test
	void rulesAreValidated() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new GrayRules(" ", null, GrayFallback.ALL, true, Set.of(), Map.of(), null));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new GrayRules("h", null, GrayFallback.ALL, true, Set.of(), Map.of("v2", 120.0), null))
			.withMessageContaining("between 0 and 100");
		assertThatIllegalArgumentException().isThrownBy(
				() -> new GrayRules("h", null, GrayFallback.ALL, true, Set.of(), Map.of("v2", 60.0, "v3", 50.0), null))
			.withMessageContaining("more than 100");
		assertThatIllegalArgumentException().isThrownBy(() -> GrayFallback.fromValue("nowhere"))
			.withMessage("'nowhere' is not a gray fallback; allowed values: baseline, all, none");
	}

	@Test
	void aLaneRuleComesBeforeTheHeaderAndTheOwnTag() {
		LaneRule beta = new LaneRule("v2", LaneRule.Source.HEADER, "X-User-Group", LaneRule.Match.EQUALS,
				List.of("beta"));
		LaneRule cookie = new LaneRule("v2", LaneRule.Source.COOKIE, "canary", LaneRule.Match.EQUALS, List.of("1"));
		GrayRouter router = new GrayRouter(SERVICE, new GrayRules("X-Service-Version", "v1", GrayFallback.BASELINE,
				true, Set.of(), Map.of(), null, List.of(beta, cookie)), this.meters);
		assertThat(ids(router.filter(this.fleet,
				LaneRuleTest.outbound("http://users/1", Map.of("X-User-Group", "beta", "X-Service-Version", "v1")))))
			.as("the rule wins over the header")
			.containsExactly("C1");
		assertThat(
				ids(router.filter(this.fleet, LaneRuleTest.outbound("http://users/1", Map.of("Cookie", "canary=1")))))
			.as("a cookie rule wins over the own tag")
			.containsExactly("C1");
		assertThat(ids(
				router.filter(this.fleet, LaneRuleTest.outbound("http://users/1", Map.of("X-User-Group", "alpha")))))
			.as("no rule matches: own tag v1, which no instance has: baseline")
			.containsExactly("S1", "S2");
		assertThat(ids(router.filter(this.fleet,
				LaneRuleTest.outbound("http://users/1", Map.of("X-User-Group", "alpha", "X-Service-Version", "v2")))))
			.as("no rule matches: the header")
			.containsExactly("C1");
	}

}
