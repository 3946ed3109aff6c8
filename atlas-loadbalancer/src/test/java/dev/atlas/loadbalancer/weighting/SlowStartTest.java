package dev.atlas.loadbalancer.weighting;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.MutableClock;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
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
class SlowStartTest {

	private static final long T0 = 1_700_000_000_000L;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final MutableClock clock = new MutableClock(T0);

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);

	private InstanceSnapshot fleet(ServiceInstance... instances) {
		return InstanceSnapshot.of(List.of(instances), this.parser);
	}

	private static ServiceInstance registeredAt(String id, long millis) {
		return instance(id, "atlas.registered-at", Long.toString(millis));
	}

	@Test
	void envoyCurveDefaults() {
		WarmupRules rules = WarmupRules.DEFAULTS;
		assertThat(rules.factor(0)).isEqualTo(0.10);
		assertThat(rules.factor(3_000)).as("5 %% of the window is below the 10 %% floor").isEqualTo(0.10);
		assertThat(rules.factor(6_000)).isEqualTo(0.10);
		assertThat(rules.factor(30_000)).isEqualTo(0.50);
		assertThat(rules.factor(60_000)).isEqualTo(1.0);
		assertThat(rules.factor(-5)).isEqualTo(0.10);
		// aggression 2: (age/duration)^(1/2) ramps faster early.
		assertThat(new WarmupRules(Duration.ofSeconds(60), 2.0, 10).factor(15_000)).isEqualTo(0.50);
		assertThat(WarmupRules.OFF.factor(0)).isEqualTo(1.0);
	}

	@Test
	void sharesAtTenFiftyAndHundredPercentOfTheWindow() {
		// Old instance A (weight 1, warm) and new instance B (weight 1) registered at T0;
		// 60 s window.
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		InstanceSnapshot fleet = fleet(registeredAt("A", T0 - 3_600_000), registeredAt("B", T0));
		// 10 % of the window: B's factor is max(10 %, 6/60) = 0.10 -> B's share 0.1/1.1.
		this.clock.set(T0 + 6_000);
		assertThat(slowStart.apply(fleet).effectiveWeights()).containsExactly(1.0, 0.10);
		assertThat(shareOfB(slowStart.apply(fleet))).isCloseTo(0.1 / 1.1, within(0.02));
		// 50 %: factor 0.5 -> share 1/3.
		this.clock.set(T0 + 30_000);
		assertThat(slowStart.apply(fleet).effectiveWeights()).containsExactly(1.0, 0.5);
		assertThat(shareOfB(slowStart.apply(fleet))).isCloseTo(1 / 3.0, within(0.02));
		// 100 %: warm, the very input snapshot comes back.
		this.clock.set(T0 + 60_000);
		assertThat(slowStart.apply(fleet)).isSameAs(fleet);
		assertThat(shareOfB(slowStart.apply(fleet))).isCloseTo(0.5, within(0.02));
	}

	@Test
	void newRulesKeepTheAgesSeenSoFar() {
		// A is in the first list (warm); B joins at T0 without registration time: its age
		// counts from when this caller first saw it.
		SlowStart first = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		first.apply(fleet(instance("A")));
		InstanceSnapshot withB = fleet(instance("A"), instance("B"));
		first.apply(withB);
		this.clock.set(T0 + 30_000);
		assertThat(first.apply(withB).effectiveWeights()).containsExactly(1.0, 0.5);
		// The duration doubles at runtime: B is 30 s old, a quarter of the new window.
		SlowStart second = first.withRules(new WarmupRules(Duration.ofSeconds(120), 1.0, 10));
		InstanceSnapshot listedAgain = fleet(instance("A"), instance("B"));
		assertThat(second.apply(listedAgain).effectiveWeights()).as("B keeps its age, A stays warm")
			.containsExactly(1.0, 0.25);
		assertThat(second.rules().duration()).hasSeconds(120);
		assertThat(first.rules().duration()).as("the previous version is unchanged").hasSeconds(60);
		// A fresh warmup would treat the list it sees first as warm: B would be at 1.0.
		assertThat(new SlowStart(second.rules(), this.clock).apply(listedAgain)).isSameAs(listedAgain);
	}

	@Test
	void warmupTurnedOnAtRuntimeCountsTheInstancesItFirstSeesAsWarm() {
		SlowStart off = new SlowStart(WarmupRules.OFF, this.clock);
		off.apply(fleet(instance("A")));
		this.clock.set(T0 + 600_000);
		// B joined while warmup was off: it has served for a while, it is not new
		InstanceSnapshot withB = fleet(instance("A"), instance("B"));
		assertThat(off.apply(withB)).isSameAs(withB);
		SlowStart on = off.withRules(WarmupRules.DEFAULTS);
		assertThat(on.apply(withB)).as("both warm").isSameAs(withB);
		this.clock.set(T0 + 630_000);
		InstanceSnapshot withC = fleet(instance("A"), instance("B"), instance("C"));
		assertThat(on.apply(withC).effectiveWeights()).as("C, new since warmup is on, ramps up")
			.containsExactly(1.0, 1.0, 0.1);
	}

	/**
	 * 20,000 picks with a seeded random; sigma of a share below 0.4 points, tolerance 2
	 * points.
	 */
	private static double shareOfB(InstanceSnapshot candidates) {
		SplittableRandom random = new SplittableRandom(42);
		WeightedRandomBalancer seeded = new WeightedRandomBalancer(new StrategySettings(SERVICE,
				new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry()),
				AllZeroWeightsPolicy.FAIL_OPEN, new SimpleMeterRegistry()), () -> random);
		int b = 0;
		for (int i = 0; i < 20_000; i++) {
			if ("B".equals(seeded.choose(candidates).getInstanceId())) {
				b++;
			}
		}
		return b / 20_000.0;
	}

	@Test
	void recomputedOncePerTickNotPerRequest() {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		InstanceSnapshot fleet = fleet(registeredAt("A", T0 - 3_600_000), registeredAt("B", T0));
		this.clock.set(T0 + 12_000);
		InstanceSnapshot first = slowStart.apply(fleet);
		this.clock.set(T0 + 12_900);
		assertThat(slowStart.apply(fleet)).as("same tick, same object").isSameAs(first);
		this.clock.set(T0 + 13_000);
		assertThat(slowStart.apply(fleet)).isNotSameAs(first);
	}

	/**
	 * Seen failing before: the provider's stamp, ten minutes behind this caller's clock,
	 * made the brand-new instance warm at once.
	 */
	@Test
	void aProviderClockBehindDoesNotGiveANewInstanceItsFullWeight(CapturedOutput output) {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		slowStart.apply(fleet(instance("A")));
		this.clock.advance(Duration.ofSeconds(5));
		long behind = this.clock.millis() - Duration.ofMinutes(10).toMillis();
		InstanceSnapshot withB = fleet(instance("A"), registeredAt("B", behind));
		assertThat(slowStart.apply(withB).effectiveWeights()).as("at first sight").containsExactly(1.0, 0.10);
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(slowStart.apply(withB).effectiveWeights()).as("half the window on the caller's clock")
			.containsExactly(1.0, 0.5);
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(slowStart.apply(withB)).as("warm after the window").isSameAs(withB);
		assertThat(output.getOut()).containsOnlyOnce("its registration time (atlas.registered-at) is");
	}

	/**
	 * Seen failing before: the provider's stamp, an hour ahead, kept the instance at the
	 * minimum weight for the hour, far beyond the 60 s window; in the caller's first list
	 * and arriving later.
	 */
	@Test
	void aProviderClockAheadDoesNotKeepAnInstanceAtTheMinimumAfterTheWindow(CapturedOutput output) {
		long ahead = T0 + Duration.ofHours(1).toMillis();
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		InstanceSnapshot first = fleet(instance("A"), registeredAt("B", ahead));
		assertThat(slowStart.apply(first).effectiveWeights()).containsExactly(1.0, 0.10);
		this.clock.advance(Duration.ofSeconds(5));
		InstanceSnapshot withC = fleet(instance("A"), registeredAt("B", ahead), registeredAt("C", ahead));
		assertThat(slowStart.apply(withC).effectiveWeights()).containsExactly(1.0,
				1.0 * WarmupRules.DEFAULTS.factor(5_000), 0.10);
		this.clock.advance(Duration.ofSeconds(60));
		assertThat(slowStart.apply(withC)).as("both warm one window later on the caller's clock").isSameAs(withC);
		assertThat(output.getOut()).contains("Instance B").contains("Instance C").contains("ahead of");
	}

	@Test
	void aRegistrationTimeBetweenTheCallersListsIsTrusted() {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		slowStart.apply(fleet(instance("A")));
		this.clock.set(T0 + 20_000);
		// registered at T0 + 8 s, listed for this caller at T0 + 20 s: 12 s old
		InstanceSnapshot withB = fleet(instance("A"), registeredAt("B", T0 + 8_000));
		assertThat(slowStart.apply(withB).effectiveWeights()).containsExactly(1.0, 0.2);
	}

	@Test
	void futureRegistrationTimeIsClampedToNow() {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		InstanceSnapshot fleet = fleet(registeredAt("A", T0 - 3_600_000), registeredAt("B", T0 + 3_600_000));
		assertThat(slowStart.apply(fleet).effectiveWeights()).containsExactly(1.0, 0.10);
	}

	@Test
	void aCallerThatStartsSeesItsFirstListAsWarmAndLaterArrivalsAsNew() {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		InstanceSnapshot first = fleet(instance("A"), instance("B"));
		assertThat(slowStart.apply(first)).as("no distortion at caller start").isSameAs(first);
		this.clock.advance(Duration.ofSeconds(5));
		InstanceSnapshot withC = fleet(instance("A"), instance("B"), instance("C"));
		assertThat(slowStart.apply(withC).effectiveWeights()).containsExactly(1.0, 1.0, 0.10);
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(slowStart.apply(withC).effectiveWeights()).containsExactly(1.0, 1.0, 0.5);
	}

	@Test
	void anInstanceThatStaysInTheListStaysWarmAcrossRefreshesHoursLater() {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		slowStart.apply(fleet(instance("A"), instance("B")));
		for (int refresh = 0; refresh < 3; refresh++) {
			this.clock.advance(Duration.ofHours(1));
			// Every refresh brings new objects for the same instances.
			InstanceSnapshot refreshed = fleet(instance("A"), instance("B"));
			assertThat(slowStart.apply(refreshed)).isSameAs(refreshed);
		}
	}

	@Test
	void anInstanceMissingForLongerThanTheHorizonIsNewWhenItComesBack() {
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		assertThat(slowStart.forgetAfterMillis()).isEqualTo(Duration.ofMinutes(10).toMillis());
		slowStart.apply(fleet(instance("A"), instance("B")));
		this.clock.advance(Duration.ofMinutes(5));
		slowStart.apply(fleet(instance("A")));
		this.clock.advance(Duration.ofMinutes(11));
		slowStart.apply(fleet(instance("A"), instance("C")));
		this.clock.advance(Duration.ofSeconds(20));
		assertThat(slowStart.apply(fleet(instance("A"), instance("B"))).effectiveWeights()).containsExactly(1.0, 0.10);
	}

	@Test
	void listsShowingPartOfTheFleetNeverMakeAnInstanceNew() {
		// Suppliers below the stage (Spring's hint-based or same-instance ones) may emit
		// a subset per request.
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, this.clock);
		slowStart.apply(fleet(instance("A"), instance("B"), instance("C")));
		for (int i = 0; i < 20; i++) {
			this.clock.advance(Duration.ofMinutes(1));
			slowStart.apply(fleet(instance("A")));
			this.clock.advance(Duration.ofSeconds(1));
			InstanceSnapshot whole = fleet(instance("A"), instance("B"), instance("C"));
			assertThat(slowStart.apply(whole)).as("after %d minutes", i + 1).isSameAs(whole);
		}
	}

	@Test
	void aWarmSnapshotIsReturnedWithoutReadingTheClock() {
		CountingClock counting = new CountingClock(this.clock);
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, counting);
		InstanceSnapshot fleet = fleet(registeredAt("A", T0 - 3_600_000), instance("B"));
		assertThat(slowStart.apply(fleet)).isSameAs(fleet);
		int reads = counting.reads;
		for (int i = 0; i < 1_000; i++) {
			assertThat(slowStart.apply(fleet)).isSameAs(fleet);
		}
		assertThat(counting.reads).isEqualTo(reads);
	}

	@Test
	void zeroWeightsStayZeroAndOffMeansUnchanged() {
		InstanceSnapshot fleet = fleet(instance("A", "weight", "0", "atlas.registered-at", Long.toString(T0)),
				registeredAt("B", T0));
		assertThat(new SlowStart(WarmupRules.DEFAULTS, this.clock).apply(fleet).effectiveWeights()).containsExactly(0.0,
				0.1);
		assertThat(new SlowStart(WarmupRules.OFF, this.clock).apply(fleet)).isSameAs(fleet);
	}

	@Test
	void manyInstancesAtDifferentAgesKeepFewDistinctFactors() {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			instances.add(registeredAt("i" + i, T0 - i * 37L));
		}
		double[] weights = new SlowStart(WarmupRules.DEFAULTS, this.clock)
			.apply(InstanceSnapshot.of(instances, this.parser))
			.effectiveWeights();
		assertThat(Arrays.stream(weights).distinct().count()).isLessThanOrEqualTo(100);
	}

	@Test
	void rulesAreValidated() {
		assertThatIllegalArgumentException().isThrownBy(() -> new WarmupRules(Duration.ofSeconds(-1), 1, 10));
		assertThatIllegalArgumentException().isThrownBy(() -> new WarmupRules(Duration.ofSeconds(1), 0, 10))
			.withMessageContaining("aggression");
		assertThatIllegalArgumentException().isThrownBy(() -> new WarmupRules(Duration.ofSeconds(1), 1, 101))
			.withMessageContaining("min-weight-percent");
	}

	/** Counts {@code millis()} calls. */
	private static final class CountingClock extends Clock {

		int reads;

		private final Clock delegate;

		CountingClock(Clock delegate) {
			this.delegate = delegate;
		}

		@Override
		public long millis() {
			this.reads++;
			return this.delegate.millis();
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(millis());
		}

		@Override
		public ZoneId getZone() {
			return this.delegate.getZone();
		}

		@Override
		public Clock withZone(ZoneId zone) {
			throw new UnsupportedOperationException();
		}

	}

}
