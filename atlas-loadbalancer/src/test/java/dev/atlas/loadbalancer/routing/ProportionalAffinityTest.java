package dev.atlas.loadbalancer.routing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.MutableClock;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.LaneHealth;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Cluster affinity in proportional mode. Shares are measured over {@value #DRAWS} picks
 * with a fixed seed: the binomial standard deviation of a share near 1/3 is 0.003, so the
 * stated tolerance of 0.01 is over three deviations.
 */
@ExtendWith(OutputCaptureExtension.class)
class ProportionalAffinityTest {

	private static final int DRAWS = 20_000;

	private static final double TOLERANCE = 0.01;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);

	private final AffinityMeters affinityMeters = new AffinityMeters(SERVICE, this.meters);

	private final SplittableRandom random = new SplittableRandom(42);

	private @Nullable CallerZones callers = new CallerZones(Map.of("a", 6, "b", 6), 0);

	private final FakeHealth health = new FakeHealth();

	private boolean hashing;

	private AffinityRules rules = new AffinityRules("a", AffinityMode.PROPORTIONAL, 0.1, 1, 6);

	private ClusterAffinity affinity() {
		return new ClusterAffinity(SERVICE, () -> this.rules, () -> this.callers, this.health, () -> this.hashing,
				this.affinityMeters, new MutableClock(0), this.random);
	}

	/** {@code a} providers in zone a, {@code b} in zone b, named a0.., b0... */
	private InstanceSnapshot fleet(int a, int b) {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < a; i++) {
			instances.add(instance("a" + i, "zone", "a"));
		}
		for (int i = 0; i < b; i++) {
			instances.add(instance("b" + i, "zone", "b"));
		}
		return InstanceSnapshot.of(instances, this.parser);
	}

	/** Picks per zone (the first letter of the id) over {@value #DRAWS} requests. */
	private Map<String, Double> zoneShares(ClusterAffinity affinity, InstanceSnapshot candidates) {
		Map<String, Integer> counts = new HashMap<>();
		for (int k = 0; k < DRAWS; k++) {
			InstanceSnapshot lane = affinity.apply(candidates);
			Set<String> zones = new HashSet<>();
			lane.forEach((instance) -> zones.add(instance.getInstanceId().substring(0, 1)));
			assertThat(zones).as("a lane is one zone").hasSize(1);
			counts.merge(zones.iterator().next(), 1, Integer::sum);
		}
		Map<String, Double> shares = new HashMap<>();
		counts.forEach((zone, count) -> shares.put(zone, count / (double) DRAWS));
		return shares;
	}

	private double crossZone() {
		return this.meters.counter(AffinityMeters.CROSS_ZONE_METER, "service", SERVICE).count();
	}

	private double localRatio() {
		return this.meters.get(AffinityMeters.LOCAL_RATIO_METER).tag("service", SERVICE).gauge().value();
	}

	@Test
	void unevenZonesKeepTheLocalShareThatLoadsEveryProviderEqually() {
		// callers 6/6, providers 2/10: L = (2/12) / (6/12) = 1/3 stays local
		InstanceSnapshot fleet = fleet(2, 10);
		Map<String, Double> fromA = zoneShares(affinity(), fleet);
		assertThat(fromA.get("a")).isCloseTo(1 / 3.0, within(TOLERANCE));
		assertThat(crossZone()).isCloseTo(DRAWS * 2 / 3.0, within(DRAWS * TOLERANCE));
		assertThat(localRatio()).isCloseTo(1 / 3.0, within(1e-9));
		// a caller in b keeps all: its zone has more than its share of providers
		this.rules = this.rules.withZone("b");
		Map<String, Double> fromB = zoneShares(affinity(), fleet);
		assertThat(fromB).containsOnlyKeys("b");
		// per provider, six callers in each zone: zone a's 2 get 6 × 1/3, zone b's 10 the
		// rest
		double perA = 6 * fromA.get("a") / 2;
		double perB = (6 * fromA.get("b") + 6) / 10;
		assertThat(Math.max(perA, perB) / ((perA * 2 + perB * 10) / 12)).isLessThanOrEqualTo(1.05);
	}

	@Test
	void evenZonesStayLocal() {
		assertThat(zoneShares(affinity(), fleet(6, 6))).containsOnlyKeys("a");
		assertThat(crossZone()).isZero();
		assertThat(localRatio()).isEqualTo(1);
	}

	@Test
	void aLaneOfTheOwnZoneHoldsItsUsableInstancesOnly() {
		InstanceSnapshot fleet = InstanceSnapshot.of(List.of(instance("a0", "zone", "a"), instance("a1", "zone", "a"),
				instance("a2", "zone", "a", "nacos.healthy", "false"), instance("b0", "zone", "b"),
				instance("b1", "zone", "b"), instance("b2", "zone", "b")), this.parser);
		this.callers = new CallerZones(Map.of("a", 1, "b", 1), 0);
		ClusterAffinity affinity = affinity();
		InstanceSnapshot local = null;
		for (int k = 0; k < 200 && local == null; k++) {
			InstanceSnapshot lane = affinity.apply(fleet);
			if (lane.get(0).getInstanceId().startsWith("a")) {
				local = lane;
			}
		}
		assertThat(local).isNotNull().extracting(ServiceInstance::getInstanceId).containsExactly("a0", "a1");
	}

	@Test
	void withoutTheCallersSpreadTheThresholdRulesApplyAndTheViewSaysWhy(CapturedOutput output) {
		this.callers = null;
		ClusterAffinity affinity = affinity();
		assertThat(affinity.apply(fleet(2, 10))).extracting(ServiceInstance::getInstanceId).containsExactly("a0", "a1");
		assertThat(affinity.zoneRouting()).containsEntry("active", false)
			.containsEntry("inactive", "the callers' zones are unknown");
		assertThat(output).containsOnlyOnce("proportional zone routing is off: the callers' zones are unknown");
		affinity.apply(fleet(2, 10));
		assertThat(output).containsOnlyOnce("proportional zone routing is off");
	}

	@Test
	void belowTheMinimumClusterSizeTheThresholdRulesApply() {
		ClusterAffinity affinity = affinity();
		assertThat(affinity.apply(fleet(1, 4))).extracting(ServiceInstance::getInstanceId).containsExactly("a0");
		assertThat(affinity.zoneRouting()).containsEntry("inactive", ZoneShares.Inactive.TOO_SMALL.description());
		this.rules = new AffinityRules("a", AffinityMode.PROPORTIONAL, 0.1, 1, 5);
		assertThat(zoneShares(affinity(), fleet(1, 4))).containsKeys("a", "b");
	}

	@Test
	void aNewCallersSpreadIsSeenAtTheNextRequest(CapturedOutput output) {
		ClusterAffinity affinity = affinity();
		InstanceSnapshot fleet = fleet(6, 6);
		assertThat(zoneShares(affinity, fleet)).containsOnlyKeys("a");
		// all callers now in zone a: it keeps half, the other half goes to b's spare
		// capacity
		this.callers = new CallerZones(Map.of("a", 12), 0);
		assertThat(zoneShares(affinity, fleet).get("a")).isCloseTo(0.5, within(TOLERANCE));
		assertThat(affinity.zoneRouting()).containsEntry("active", true).containsEntry("localShare", 0.5);
		assertThat(output).containsOnlyOnce("proportional zone routing is on");
	}

	@Test
	void ejectionsMakeTheLocalZoneShedGraduallyWithTheOverprovisioningFactor() {
		// callers 5/5, providers 10/10: 6 of zone a's healthy: m = min(1, 1.4 × 0.6) =
		// 0.84
		InstanceSnapshot lane = fleet(10, 10);
		for (int i = 6; i < 10; i++) {
			this.health.eject(lane.key(i));
		}
		InstanceSnapshot candidates = lane.filter((i) -> !this.health.isEjected(lane.key(i)));
		this.health.lanes.put(candidates, lane);
		this.callers = new CallerZones(Map.of("a", 5, "b", 5), 0);
		ClusterAffinity affinity = affinity();
		assertThat(zoneShares(affinity, candidates).get("a")).isCloseTo(0.84, within(TOLERANCE));
		assertThat(localRatio()).isCloseTo(0.84, within(1e-9));
		// 8 healthy: m = 1, everything stays (the decision follows the ejection version)
		this.health.returned(lane.key(6));
		this.health.returned(lane.key(7));
		InstanceSnapshot fewer = lane.filter((i) -> !this.health.isEjected(lane.key(i)));
		this.health.lanes.put(fewer, lane);
		assertThat(zoneShares(affinity, fewer)).containsOnlyKeys("a");
	}

	@Test
	void providersWithoutZoneAreAZoneNoCallerIsInCountedAndWarnedOnce(CapturedOutput output) {
		List<ServiceInstance> instances = new ArrayList<>(fleet(3, 3));
		instances.add(instance("n0"));
		instances.add(instance("n1"));
		this.callers = new CallerZones(Map.of("a", 1, "b", 1), 2);
		ClusterAffinity affinity = affinity();
		// p(a) = 3/8 < c(a) = 1/2: a keeps 3/4, the rest goes by spare capacity, all of
		// it
		// the zoneless providers' (b has none spare: 3/8 < 1/2)
		Map<String, Double> shares = zoneShares(affinity, InstanceSnapshot.of(instances, this.parser));
		assertThat(shares.get("a")).isCloseTo(0.75, within(TOLERANCE));
		assertThat(shares.get("n")).isCloseTo(0.25, within(TOLERANCE));
		assertThat(affinity.zoneRouting()).containsEntry("providersWithoutZone", 2)
			.containsEntry("callersWithoutZone", 2);
		assertThat(output).containsOnlyOnce("2 instance(s) have no zone metadata");
	}

	@Test
	void aNewEjectionVersionIsSeenOnTheSameSnapshot() {
		// callers 5/5, providers 10/10; outlier ejection returned the lane whole (nothing
		// of it ejected when it ran), then 5 of zone a's are ejected: h = 0.5, m = 0.7
		InstanceSnapshot lane = fleet(10, 10);
		this.callers = new CallerZones(Map.of("a", 5, "b", 5), 0);
		ClusterAffinity affinity = affinity();
		assertThat(zoneShares(affinity, lane)).containsOnlyKeys("a");
		for (int i = 0; i < 5; i++) {
			this.health.eject(lane.key(i));
		}
		assertThat(zoneShares(affinity, lane).get("a")).as("recomputed for the new ejection version")
			.isCloseTo(0.7, within(TOLERANCE));
	}

	@Test
	void withAStrategyThatHashesKeysTheThresholdRulesApply() {
		this.hashing = true;
		ClusterAffinity affinity = affinity();
		assertThat(affinity.apply(fleet(2, 10))).extracting(ServiceInstance::getInstanceId).containsExactly("a0", "a1");
		assertThat(affinity.zoneRouting()).containsEntry("inactive", ClusterAffinity.HASHING);
	}

	@Test
	void eachGrayLaneIsReportedOnceAndTheViewFollowsTheLargest(CapturedOutput output) {
		List<ServiceInstance> canary = List.of(instance("a-v2", "zone", "a", "version", "v2"),
				instance("b-v2", "zone", "b", "version", "v2"));
		InstanceSnapshot canaryLane = InstanceSnapshot.of(canary, this.parser);
		InstanceSnapshot baseline = fleet(2, 10);
		ClusterAffinity affinity = affinity();
		for (int k = 0; k < 3; k++) {
			affinity.apply(baseline);
			affinity.apply(canaryLane);
		}
		this.callers = new CallerZones(Map.of("a", 6, "b", 7), 0);
		for (int k = 0; k < 3; k++) {
			affinity.apply(baseline);
			affinity.apply(canaryLane);
		}
		assertThat(output).containsOnlyOnce("(lane 'v2'): proportional zone routing is off: fewer providers")
			.containsOnlyOnce("proportional zone routing is on");
		assertThat(affinity.zoneRouting()).as("the baseline lane, the largest").containsEntry("active", true);
	}

	@Test
	void weightsTooLargeToSumNeverFailARequest(CapturedOutput output) {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			instances.add(instance("a" + i, "zone", "a", "weight", "1e308"));
		}
		InstanceSnapshot fleet = InstanceSnapshot.of(instances, this.parser);
		ClusterAffinity affinity = affinity();
		assertThat(affinity.apply(fleet)).isNotEmpty();
		assertThat(affinity.apply(fleet)).isNotEmpty();
		assertThat(affinity.zoneRouting()).containsEntry("active", false);
	}

	@Test
	void inPanicModeEveryCandidateIsUsed() {
		InstanceSnapshot lane = fleet(6, 6);
		for (int i = 0; i < 7; i++) {
			this.health.eject(lane.key(i));
		}
		ClusterAffinity affinity = affinity();
		assertThat(affinity.apply(lane)).as("outlier ejection kept the ejected instances: panic").isSameAs(lane);
		assertThat(affinity.zoneRouting()).containsEntry("inactive", "outlier detection is in panic mode");
	}

	@Test
	void strictStaysInTheZoneWhileOneInstanceIsUsable() {
		InstanceSnapshot fleet = InstanceSnapshot.of(
				List.of(instance("a0", "zone", "a"), instance("a1", "zone", "a", "nacos.healthy", "false"),
						instance("a2", "zone", "a", "nacos.healthy", "false"), instance("b0", "zone", "b")),
				this.parser);
		AffinityRules threshold = new AffinityRules("a", AffinityMode.THRESHOLD, 0.5, 1, 6);
		this.rules = threshold;
		assertThat(affinity().apply(fleet)).extracting(ServiceInstance::getInstanceId).containsExactly("a0", "b0");
		this.rules = threshold.withMode(AffinityMode.STRICT);
		assertThat(affinity().apply(fleet)).extracting(ServiceInstance::getInstanceId).containsExactly("a0");
		InstanceSnapshot noneUsable = fleet.filter((i) -> i > 0);
		assertThat(affinity().apply(noneUsable)).as("an empty zone: every usable instance")
			.extracting(ServiceInstance::getInstanceId)
			.containsExactly("b0");
	}

	@Test
	void aReplacementUnderNewRulesKeepsTheSpreadHealthAndMeters() {
		ClusterAffinity first = affinity();
		ClusterAffinity next = first.withRules(this.rules.withZone("b"));
		assertThat(next.meters()).isSameAs(first.meters());
		assertThat(zoneShares(next, fleet(2, 10))).containsOnlyKeys("b");
	}

	/** Outlier detection as a later filter sees it. */
	private static final class FakeHealth implements LaneHealth {

		final Map<InstanceSnapshot, InstanceSnapshot> lanes = new HashMap<>();

		private Set<InstanceKey> ejected = Set.of();

		void eject(InstanceKey key) {
			Set<InstanceKey> more = new HashSet<>(this.ejected);
			more.add(key);
			this.ejected = more;
		}

		void returned(InstanceKey key) {
			Set<InstanceKey> fewer = new HashSet<>(this.ejected);
			fewer.remove(key);
			this.ejected = fewer;
		}

		@Override
		public Object ejectionVersion() {
			return this.ejected;
		}

		@Override
		public boolean isEjected(InstanceKey key) {
			return this.ejected.contains(key);
		}

		@Override
		public boolean panics(InstanceSnapshot lane) {
			long kept = lane.stream().filter((instance) -> !this.ejected.contains(InstanceKey.of(instance))).count();
			return kept < lane.size() && kept * 2 < lane.size();
		}

		@Override
		public @Nullable InstanceSnapshot laneBefore(InstanceSnapshot candidates) {
			for (Map.Entry<InstanceSnapshot, InstanceSnapshot> entry : this.lanes.entrySet()) {
				if (entry.getKey() == candidates) {
					return entry.getValue();
				}
			}
			return null;
		}

	}

}
