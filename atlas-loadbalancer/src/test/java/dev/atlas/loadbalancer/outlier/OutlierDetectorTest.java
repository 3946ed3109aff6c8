package dev.atlas.loadbalancer.outlier;

import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.atlas.loadbalancer.ManualScheduler;
import dev.atlas.loadbalancer.MutableClock;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.stats.InstanceStatsLifecycle;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.assertj.core.api.Assertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultRequestContext;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Outlier detection on an injectable clock and a scheduler run by hand: thresholds,
 * growing ejection time, max-ejection-percent, panic threshold, probing back.
 */
class OutlierDetectorTest {

	private static final CandidateRequest NO_REQUEST = new CandidateRequest() {

		@Override
		public @Nullable Request<?> request() {
			return null;
		}

		@Override
		public @Nullable String header(String lowerCaseName) {
			return null;
		}

	};

	private final MutableClock clock = new MutableClock(1_000_000);

	private final ManualScheduler scheduler = new ManualScheduler(this.clock);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final Set<String> down = new HashSet<>();

	private final List<String> probed = new ArrayList<>();

	private OutlierRules rules = OutlierRules.DEFAULTS;

	private InstanceSnapshot fleet = snapshot(3);

	private OutlierDetector detector = detector();

	private OutlierEjection ejection = new OutlierEjection(this.detector);

	/**
	 * A malformed instance (its getter throws) makes the lifecycle callbacks of outlier
	 * detection and of the statistics fail inside; the caller still sees the request's
	 * own outcome, not their exception.
	 */
	@Test
	void noLifecycleCallbackThrowsOnAMalformedInstance() {
		ServiceInstance malformed = new DefaultServiceInstance("bad", SERVICE, "10.0.0.9", 8080, false) {
			@Override
			public String getHost() {
				throw new IllegalStateException("malformed");
			}
		};
		Response<ServiceInstance> chosen = new DefaultResponse(malformed);
		Request<Object> request = new DefaultRequest<>(new DefaultRequestContext());
		CompletionContext<Object, ServiceInstance, Object> failed = new CompletionContext<>(
				CompletionContext.Status.FAILED, new ConnectException("refused"), request, chosen);
		OutlierLifecycle outliers = new OutlierLifecycle(this.detector);
		InstanceStatsLifecycle stats = new InstanceStatsLifecycle(new InstanceStats());
		assertThatNoException().isThrownBy(() -> {
			outliers.onStartRequest(request, chosen);
			outliers.onComplete(failed);
			stats.onStartRequest(request, chosen);
			stats.onComplete(failed);
		});
		assertThatThrownBy(() -> InstanceKey.of(malformed)).as("the instance does throw")
			.isInstanceOf(IllegalStateException.class);
	}

	private OutlierDetector detector() {
		OutlierDetector detector = new OutlierDetector(SERVICE, this.rules, this.clock, (instance) -> {
			this.probed.add(instance.getInstanceId());
			return !this.down.contains(instance.getInstanceId());
		}, this.scheduler, this.meters);
		detector.instances(() -> this.fleet);
		return detector;
	}

	private void rebuild(OutlierRules rules, int instances) {
		this.rules = rules;
		this.fleet = snapshot(instances);
		this.detector = detector();
		this.ejection = new OutlierEjection(this.detector);
	}

	private static InstanceSnapshot snapshot(int n) {
		return InstanceSnapshot.of(fleet(n),
				new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry()));
	}

	private ServiceInstance instance(int i) {
		return this.fleet.get(i);
	}

	private void fail(int i, Outcome outcome, int times) {
		for (int k = 0; k < times; k++) {
			this.detector.record(instance(i), outcome, "test");
		}
	}

	private boolean ejected(int i) {
		OutlierDetector.InstanceHealth health = this.detector.health(instance(i));
		return health != null && health.ejected();
	}

	private double ejections(String reason) {
		return this.meters.counter(OutlierDetector.EJECTIONS_METER, "service", SERVICE, "reason", reason).count();
	}

	private InstanceSnapshot candidates(InstanceSnapshot lane) {
		return this.ejection.filter(lane, NO_REQUEST);
	}

	@Test
	void fiveGatewayFailuresInARowEjectAndASuccessResetsTheCount() {
		fail(0, Outcome.GATEWAY_FAILURE, 4);
		this.detector.record(instance(0), Outcome.SUCCESS, null);
		fail(0, Outcome.GATEWAY_FAILURE, 4);
		assertThat(ejected(0)).as("4 + success + 4: never 5 in a row").isFalse();
		fail(0, Outcome.GATEWAY_FAILURE, 1);
		assertThat(ejected(0)).isTrue();
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isEqualTo(1);
		assertThat(this.meters.get(OutlierDetector.EJECTED_METER).gauge().value()).isEqualTo(1);
	}

	@Test
	void serverErrorsCountTowardsConsecutive5xxOnlyAndGatewayFailuresTowardsBoth() {
		fail(0, Outcome.SERVER_ERROR, 3);
		fail(0, Outcome.GATEWAY_FAILURE, 1);
		assertThat(this.detector.health(instance(0))).returns(4, OutlierDetector.InstanceHealth::consecutive5xx)
			.returns(1, OutlierDetector.InstanceHealth::consecutiveGatewayFailures);
		fail(0, Outcome.SERVER_ERROR, 1);
		assertThat(ejected(0)).isTrue();
		assertThat(ejections(OutlierDetector.REASON_5XX)).isEqualTo(1);
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isZero();
	}

	@Test
	void ignoredOutcomesChangeNothingAndADisabledDetectorEjectsNothing() {
		fail(0, Outcome.IGNORED, 10);
		assertThat(this.detector.health(instance(0))).isNull();
		rebuild(OutlierRules.OFF, 3);
		fail(0, Outcome.GATEWAY_FAILURE, 10);
		assertThat(ejected(0)).isFalse();
	}

	@Test
	void ejectedInstanceIsLeftOutOfEveryRequestUntilItReturns() {
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		InstanceSnapshot kept = candidates(this.fleet);
		assertThat(kept).extracting(ServiceInstance::getInstanceId).containsExactly("i0", "i2");
		assertThat(candidates(this.fleet)).as("memoized per snapshot and ejection state").isSameAs(kept);
		this.clock.advance(Duration.ofSeconds(30));
		this.scheduler.runNext();
		assertThat(ejected(1)).isFalse();
		assertThat(candidates(this.fleet)).isSameAs(this.fleet);
	}

	@Test
	void ejectionTimeGrowsWithEachEjectionAndIsCapped() {
		// base 30 s, cap 300 s; the instance fails again right after each return
		List<Long> durations = new ArrayList<>();
		for (int n = 1; n <= 12; n++) {
			fail(0, Outcome.GATEWAY_FAILURE, 5);
			OutlierDetector.InstanceHealth health = this.detector.health(instance(0));
			assertThat(health.timesEjected()).isEqualTo(n);
			durations.add(health.ejectedUntil() - health.ejectedAt());
			this.clock.set(health.ejectedUntil());
			this.scheduler.runNext();
			assertThat(ejected(0)).isFalse();
		}
		assertThat(durations).containsExactly(30_000L, 60_000L, 90_000L, 120_000L, 150_000L, 180_000L, 210_000L,
				240_000L, 270_000L, 300_000L, 300_000L, 300_000L);
	}

	@Test
	void theMultiplierDecaysByOnePerBaseEjectionTimeBackInService() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		this.scheduler.runNext();
		assertThat(ejected(0)).isFalse();
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		assertThat(this.detector.health(instance(0)).timesEjected()).as("failed again right after returning")
			.isEqualTo(2);
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(this.detector.health(instance(0)).timesEjected()).as("while ejected: the current multiplier")
			.isEqualTo(2);
		this.scheduler.runNext();
		assertThat(ejected(0)).isFalse();
		this.clock.advance(Duration.ofSeconds(65));
		assertThat(this.detector.health(instance(0)).timesEjected()).as("two base periods healthy: 2 - 2").isZero();
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		OutlierDetector.InstanceHealth health = this.detector.health(instance(0));
		assertThat(health.ejectedUntil() - health.ejectedAt()).isEqualTo(30_000);
	}

	@Test
	void returnsOnlyWhenTheEjectionIsOverAndAProbePasses() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		this.down.add("i0");
		this.clock.advance(Duration.ofSeconds(29));
		this.scheduler.runDue();
		assertThat(this.probed).as("no probe before the ejection time is over").isEmpty();
		this.clock.advance(Duration.ofSeconds(1));
		this.scheduler.runNext();
		assertThat(this.probed).containsExactly("i0");
		assertThat(ejected(0)).as("probe failed").isTrue();
		long probeFailedAt = this.clock.millis();
		this.down.remove("i0");
		this.scheduler.runNext();
		assertThat(ejected(0)).isFalse();
		assertThat(this.clock.millis() - probeFailedAt).as("next probe one interval (5 s) +- 10 % later")
			.isBetween(4_500L, 5_500L);
		assertThat(this.scheduler.pending()).as("nothing runs for an instance that is not ejected").isZero();
	}

	@Test
	void firstProbeComesWithinTenPercentOfAnIntervalAfterTheEjectionEnds() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		assertThat(this.scheduler.delays()).singleElement()
			.satisfies((delay) -> assertThat(delay).isBetween(30_000L, 30_501L));
	}

	@Test
	void anInstanceThatLeavesTheRegistryWhileEjectedIsForgottenAndNoLongerProbed() {
		fail(2, Outcome.GATEWAY_FAILURE, 5);
		this.fleet = InstanceSnapshot.of(List.of(this.fleet.get(0), this.fleet.get(1)),
				new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry()));
		this.clock.advance(Duration.ofSeconds(31));
		this.scheduler.runDue();
		assertThat(this.probed).isEmpty();
		assertThat(this.detector.ejected().size()).isZero();
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void probingStopsWhenTheServiceIsNoLongerCalled() {
		long[] calls = { 100 };
		this.detector.traffic(() -> calls[0]);
		this.down.add("i0");
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		for (int k = 0; k < 80; k++) {
			calls[0] += 50;
			this.scheduler.runNext();
		}
		assertThat(ejected(0)).as("probed for more than 6 min while the service is called").isTrue();
		int probes = this.probed.size();
		// no call any more: after max-ejection-time (300 s) without a request, probing
		// stops
		while (this.scheduler.pending() > 0) {
			this.scheduler.runNext();
		}
		assertThat(ejected(0)).isFalse();
		assertThat(this.probed.size() - probes).isBetween(55, 67);
		assertThat(this.detector.health(instance(0)).timesEjected()).as("history kept").isOne();
	}

	@Test
	void probesAreCountedByResultButNotWithoutAProbe() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		this.down.add("i0");
		this.clock.advance(Duration.ofSeconds(30));
		this.scheduler.runNext();
		this.down.remove("i0");
		this.scheduler.runNext();
		assertThat(ejected(0)).isFalse();
		assertThat(probes("failed")).isOne();
		assertThat(probes("passed")).isOne();

		rebuild(withProbe(ProbeType.NONE), 3);
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		this.clock.advance(Duration.ofSeconds(120));
		this.scheduler.runNext();
		assertThat(ejected(0)).isFalse();
		assertThat(probes("passed")).as("no probe sent: nothing counted").isOne();
	}

	private double probes(String result) {
		return this.meters.counter(OutlierDetector.PROBES_METER, "service", SERVICE, "result", result).count();
	}

	@Test
	void withoutProbesAnInstanceReturnsWhenItsEjectionTimeIsOver() {
		rebuild(withProbe(ProbeType.NONE), 3);
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		this.down.add("i0");
		this.clock.advance(Duration.ofSeconds(30));
		this.scheduler.runNext();
		assertThat(this.probed).isEmpty();
		assertThat(ejected(0)).isFalse();
	}

	/**
	 * A true limit (Envoy's since 2023): at 10 % a service of fewer than 10 instances
	 * ejects none (it ejected one before); Atlas's default 50 % ejects one of two.
	 */
	@ParameterizedTest(name = "{0} instances, {1} % -> at most {2} ejected")
	@CsvSource({ "1, 10, 0", "2, 10, 0", "3, 10, 0", "9, 10, 0", "10, 10, 1", "20, 10, 2", "20, 0, 0", "3, 100, 3",
			"20, 50, 10", "1, 50, 0", "2, 50, 1", "3, 50, 1", "4, 50, 2", "5, 50, 2" })
	void maxEjectionPercentIsATrueLimit(int instances, double percent, int allowed) {
		rebuild(withMaxEjectionPercent(percent), instances);
		for (int i = 0; i < instances; i++) {
			fail(i, Outcome.GATEWAY_FAILURE, 5);
		}
		assertThat(this.detector.ejected().size()).isEqualTo(allowed);
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isEqualTo(allowed);
		int notEjected = instances - allowed;
		if (notEjected > 0) {
			assertThat(this.detector.health(instance(instances - 1)).consecutiveGatewayFailures())
				.as("a threshold reached beyond the maximum resets the count: no retry per request")
				.isZero();
		}
	}

	/**
	 * Four live instances over capacity, each answering 503 at once to what it cannot
	 * take: one of them answers 503 for a second in a row, and is not ejected while the
	 * others shed load too.
	 */
	@Test
	void anOverloadedFleetIsNotShrunkByEjectingItsLiveMembers() {
		rebuild(OutlierRules.DEFAULTS, 4);
		for (int round = 0; round < 3; round++) {
			fail(0, Outcome.OVERLOADED, 4);
			this.clock.advance(Duration.ofSeconds(1));
			for (int i = 1; i < 4; i++) {
				this.detector.record(instance(i), Outcome.SUCCESS, null);
				fail(i, Outcome.OVERLOADED, 2);
			}
			fail(0, Outcome.OVERLOADED, 1);
			assertThat(ejected(0)).as("round %d: a second of 503s in a row, the others shedding too", round).isFalse();
		}
		assertThat(this.detector.ejected().size()).isZero();
		// the others serve again: instance 0 alone sheds
		for (int i = 1; i < 4; i++) {
			this.detector.record(instance(i), Outcome.SUCCESS, null);
		}
		fail(0, Outcome.OVERLOADED, 4);
		this.clock.advance(Duration.ofSeconds(1));
		fail(0, Outcome.OVERLOADED, 1);
		assertThat(ejected(0)).as("a lone instance answering 503 is an outlier").isTrue();
	}

	@Test
	void anotherInstanceSheddingLongAgoDoesNotCount() {
		rebuild(OutlierRules.DEFAULTS, 4);
		fail(1, Outcome.OVERLOADED, 3);
		this.clock.advance(Duration.ofMillis(1500));
		fail(0, Outcome.OVERLOADED, 4);
		this.clock.advance(Duration.ofSeconds(1));
		fail(0, Outcome.OVERLOADED, 1);
		assertThat(ejected(0)).as("instance 1's last 503 is 2.5 s old").isTrue();
	}

	@Test
	void anInstanceAnswering503AloneForASecondIsEjected() {
		rebuild(OutlierRules.DEFAULTS, 4);
		fail(1, Outcome.OVERLOADED, 1);
		fail(0, Outcome.OVERLOADED, 20);
		assertThat(ejected(0)).as("20 fast 503s while its accepted requests are in flight").isFalse();
		this.clock.advance(Duration.ofMillis(999));
		fail(0, Outcome.OVERLOADED, 1);
		assertThat(ejected(0)).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		fail(0, Outcome.OVERLOADED, 1);
		assertThat(ejected(0)).as("another instance answered one 503: it is not shedding load").isTrue();
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isEqualTo(1);
		// a success ends the run: the next one starts its second again
		fail(2, Outcome.OVERLOADED, 4);
		this.detector.record(instance(2), Outcome.SUCCESS, null);
		this.clock.advance(Duration.ofSeconds(2));
		fail(2, Outcome.OVERLOADED, 5);
		assertThat(ejected(2)).isFalse();
	}

	/**
	 * Under max-ejection-percent, an unreachable instance (nothing it is sent is served)
	 * takes the place of one ejected for its answers (it still serves some).
	 */
	@Test
	void anUnreachableInstanceTakesThePlaceOfALiveOneUnderTheCap() {
		rebuild(withMaxEjectionPercent(25), 4);
		fail(0, Outcome.SERVER_ERROR, 5);
		assertThat(ejected(0)).isTrue();
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(ejected(1)).as("the cap: one in four, and a read timeout does not prove it gone").isFalse();
		fail(2, Outcome.UNREACHABLE, 5);
		assertThat(ejected(2)).as("connection refused five times").isTrue();
		assertThat(ejected(0)).as("returned early to make room").isFalse();
		assertThat(this.detector.ejected().size()).isEqualTo(1);
		fail(3, Outcome.UNREACHABLE, 5);
		assertThat(ejected(3)).as("no live one left to return: the cap holds").isFalse();
		assertThat(ejected(2)).isTrue();
	}

	@Test
	void laneHealthTellsALaterFilterTheLaneBeforeEjectionAndWhatIsEjected() {
		Object before = this.detector.ejectionVersion();
		assertThat(this.detector.laneBefore(candidates(this.fleet))).as("nothing ejected: no lane recorded").isNull();
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		InstanceSnapshot kept = candidates(this.fleet);
		assertThat(this.detector.laneBefore(kept)).isSameAs(this.fleet);
		assertThat(this.detector.isEjected(this.fleet.key(1))).isTrue();
		assertThat(this.detector.isEjected(this.fleet.key(0))).isFalse();
		assertThat(this.detector.ejectionVersion()).as("a new version on an ejection").isNotSameAs(before);
	}

	@Test
	void panicThresholdIgnoresEjectionForALaneBelowIt() {
		rebuild(withMaxEjectionPercent(100), 4);
		InstanceSnapshot lane = this.fleet.filter((i) -> i < 2);
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		assertThat(candidates(lane)).as("1 of 2 usable: 50 % is not below 50 %")
			.extracting(ServiceInstance::getInstanceId)
			.containsExactly("i1");
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(candidates(lane)).as("0 of 2 usable: panic, every instance of the lane").isSameAs(lane);
		assertThat(this.detector.panics(lane)).as("a later filter is told the lane is in panic").isTrue();
		assertThat(this.detector.panics(this.fleet)).isFalse();
		assertThat(candidates(lane)).isSameAs(lane);
		assertThat(this.meters.counter(OutlierDetector.PANIC_METER, "service", SERVICE).count())
			.as("each request in panic mode counted")
			.isEqualTo(2);
		assertThat(candidates(this.fleet)).as("the whole service (2 of 4 usable) is not in panic")
			.extracting(ServiceInstance::getInstanceId)
			.containsExactly("i2", "i3");
	}

	@Test
	void aLaneWithOneInstanceNeverLosesIt() {
		// Two instances: one may be ejected (50 %); its lane holds only it.
		rebuild(OutlierRules.DEFAULTS, 2);
		InstanceSnapshot lane = this.fleet.filter((i) -> i == 0);
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		assertThat(ejected(0)).isTrue();
		assertThat(candidates(lane)).isSameAs(lane);
	}

	@Test
	void withPanicThresholdZeroAFullyEjectedLaneHasNoCandidate() {
		rebuild(new OutlierRules(true, 5, 5, Duration.ofSeconds(30), Duration.ofSeconds(300), 100, 0,
				ProbeRules.DEFAULTS), 2);
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(candidates(this.fleet)).isEmpty();
		assertThat(new OutlierEjection(this.detector).emptyReason()).isEqualTo(NoInstanceReason.OUTLIERS_EJECTED);
	}

	@Test
	void newRulesApplyFromTheNextOutcomeAndKeepWhatIsKnown() {
		fail(0, Outcome.SERVER_ERROR, 2);
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(ejected(1)).isTrue();
		this.detector.update(new OutlierRules(true, 3, 5, Duration.ofSeconds(30), Duration.ofSeconds(300), 100, 50,
				ProbeRules.DEFAULTS), (instance) -> true);
		assertThat(ejected(1)).as("an ejection is kept").isTrue();
		assertThat(this.detector.health(instance(0)).consecutive5xx()).as("counts are kept").isEqualTo(2);
		fail(0, Outcome.SERVER_ERROR, 1);
		assertThat(ejected(0)).as("the third 5xx in a row ejects under the new threshold of 3").isTrue();
		assertThat(new OutlierEjection(this.detector).toString()).as("a filter made now has the new rules")
			.contains("maxEjectionPercent=100");
	}

	@Test
	void rulesTurningDetectionOffReturnEveryEjectedInstance() {
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(candidates(this.fleet)).extracting(ServiceInstance::getInstanceId).containsExactly("i0", "i2");
		this.detector.update(OutlierRules.OFF, (instance) -> true);
		assertThat(ejected(1)).isFalse();
		assertThat(this.detector.health()).as("nothing remembered").isEmpty();
		assertThat(candidates(this.fleet)).isSameAs(this.fleet);
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(ejected(1)).as("off: nothing recorded").isFalse();
		this.clock.advance(Duration.ofHours(1));
		this.scheduler.runDue();
		assertThat(this.probed).as("the pending probe of the returned instance does nothing").isEmpty();
	}

	@Test
	void outcomesOfAnInstanceWhileEjectedChangeNothing() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		fail(0, Outcome.GATEWAY_FAILURE, 20);
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isEqualTo(1);
		assertThat(this.detector.health(instance(0)).consecutiveGatewayFailures()).isZero();
	}

	@Test
	void aTransientFailureLeavesNothingBehindOnceTheInstanceSucceeds() {
		fail(0, Outcome.GATEWAY_FAILURE, 3);
		assertThat(this.detector.health(instance(0))).isNotNull();
		this.detector.record(instance(0), Outcome.SUCCESS, null);
		assertThat(this.detector.health(instance(0))).isNull();
		assertThat(this.detector.health()).isEmpty();
	}

	@Test
	void concurrentOutcomesEjectOnceAndNeverMoreThanAllowed() throws Exception {
		rebuild(withMaxEjectionPercent(10), 20);
		int threads = 8;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int seed = t;
				done.add(pool.submit(() -> {
					start.await();
					Random random = new Random(seed);
					for (int k = 0; k < 20_000; k++) {
						int i = random.nextInt(20);
						// instances 0..4 always fail, the others succeed
						this.detector.record(instance(i), (i < 5) ? Outcome.GATEWAY_FAILURE : Outcome.SUCCESS, null);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			pool.shutdown();
		}
		assertThat(this.detector.ejected().size()).as("10 % of 20").isEqualTo(2);
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isEqualTo(2);
		assertThat(this.detector.health()).extracting(OutlierDetector.InstanceHealth::key)
			.extracting(Object::toString)
			.allSatisfy((key) -> assertThat(key).matches("i[0-4].*"));
	}

	/**
	 * Requests that found an instance's entry, then a success that drops it, then
	 * failures that recreate and eject a second entry, then the first requests' failures
	 * land on the dropped entry: one instance, one entry, one ejection, and it can be
	 * ejected again after it returned. (The clock read in {@code record} is where the
	 * interleaving is forced.)
	 */
	@Test
	void aDroppedEntryThatReachesItsThresholdNeverMakesASecondEntryOfTheInstance() {
		Runnable[] hook = new Runnable[1];
		Clock hooked = new Clock() {

			@Override
			public ZoneId getZone() {
				return ZoneOffset.UTC;
			}

			@Override
			public Clock withZone(ZoneId zone) {
				return this;
			}

			@Override
			public Instant instant() {
				return Instant.ofEpochMilli(millis());
			}

			@Override
			public long millis() {
				Runnable run = hook[0];
				hook[0] = null;
				if (run != null) {
					run.run();
				}
				return OutlierDetectorTest.this.clock.millis();
			}

		};
		this.fleet = snapshot(20);
		this.detector = new OutlierDetector(SERVICE, OutlierRules.DEFAULTS, hooked, (instance) -> true, this.scheduler,
				this.meters);
		this.detector.instances(() -> this.fleet);
		fail(0, Outcome.GATEWAY_FAILURE, 3);
		int[] depth = { 0 };
		Runnable[] nested = new Runnable[1];
		nested[0] = () -> {
			if (depth[0]++ < 4) {
				// another request that found the same entry, paused at the same point
				hook[0] = nested[0];
				this.detector.record(instance(0), Outcome.GATEWAY_FAILURE, null);
			}
			else {
				this.detector.record(instance(0), Outcome.SUCCESS, null);
				fail(0, Outcome.GATEWAY_FAILURE, 5);
			}
		};
		hook[0] = nested[0];
		this.detector.record(instance(0), Outcome.GATEWAY_FAILURE, null);
		assertThat(this.detector.health()).singleElement().returns(true, OutlierDetector.InstanceHealth::ejected);
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isOne();
		this.scheduler.runNext();
		assertThat(this.detector.ejected().size()).isZero();
		this.detector.record(instance(0), Outcome.SUCCESS, null);
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		assertThat(this.detector.health()).singleElement().returns(true, OutlierDetector.InstanceHealth::ejected);
		assertThat(ejections(OutlierDetector.REASON_GATEWAY)).isEqualTo(2);
	}

	@Test
	void anEjectedInstanceTheRegistryNoLongerListsFreesItsPlaceAtTheNextEjection() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(ejected(1)).as("3 instances: one may be ejected").isFalse();
		// instance 0 is gone; its replacement has another address
		this.fleet = InstanceSnapshot.of(List.of(this.fleet.get(1), this.fleet.get(2), fleet(4).get(3)),
				new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry()));
		fail(1, Outcome.GATEWAY_FAILURE, 5);
		assertThat(ejected(1)).isTrue();
		assertThat(this.detector.ejected().size()).isOne();
	}

	@Test
	void closedDetectorStopsProbing() {
		fail(0, Outcome.GATEWAY_FAILURE, 5);
		this.detector.close();
		this.clock.advance(Duration.ofSeconds(40));
		this.scheduler.runDue();
		assertThat(this.probed).isEmpty();
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void rulesRejectOutOfRangeValuesNamingTheProperty() {
		Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutlierRules(true, -1, 5, Duration.ofSeconds(30), Duration.ofSeconds(300), 10, 50,
					ProbeRules.DEFAULTS))
			.withMessageStartingWith("consecutive5xx must be >= 0");
		Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutlierRules(true, 5, 5, Duration.ofSeconds(30), Duration.ofSeconds(10), 10, 50,
					ProbeRules.DEFAULTS))
			.withMessageStartingWith("max-ejection-time must be >= base-ejection-time");
		Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutlierRules(true, 5, 5, Duration.ofSeconds(30), Duration.ofSeconds(300), 101, 50,
					ProbeRules.DEFAULTS))
			.withMessageStartingWith("max-ejection-percent must be between 0 and 100");
		Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new ProbeRules(ProbeType.HTTP, Duration.ofSeconds(5), Duration.ofSeconds(1),
					"http://elsewhere/x"))
			.withMessageStartingWith("probe.path must be a path starting with '/'");
	}

	private static OutlierRules withMaxEjectionPercent(double percent) {
		OutlierRules d = OutlierRules.DEFAULTS;
		return new OutlierRules(true, d.consecutive5xx(), d.consecutiveGatewayFailure(), d.baseEjectionTime(),
				d.maxEjectionTime(), percent, d.panicThresholdPercent(), d.probe());
	}

	private static OutlierRules withProbe(ProbeType type) {
		OutlierRules d = OutlierRules.DEFAULTS;
		return new OutlierRules(true, d.consecutive5xx(), d.consecutiveGatewayFailure(), d.baseEjectionTime(),
				d.maxEjectionTime(), d.maxEjectionPercent(), d.panicThresholdPercent(),
				new ProbeRules(type, d.probe().interval(), d.probe().timeout(), d.probe().path()));
	}

}
