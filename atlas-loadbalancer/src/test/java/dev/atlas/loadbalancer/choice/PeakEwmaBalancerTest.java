package dev.atlas.loadbalancer.choice;

import java.time.Duration;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/** Peak-EWMA (power of two choices over latency × (in-flight + 1)) with a fixed seed. */
class PeakEwmaBalancerTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceSnapshot two = InstanceSnapshot.of(fleet(2),
			new InstanceAttributesParser(SERVICE, "version", this.meters));

	private PeakEwmaBalancer balancer() {
		SplittableRandom seeded = new SplittableRandom(42);
		return new PeakEwmaBalancer(TestPickContext.settings(this.meters), 2, () -> seeded);
	}

	private double shareOfFirst(TestPickContext context) {
		PeakEwmaBalancer balancer = balancer();
		int first = 0;
		for (int i = 0; i < 1_000; i++) {
			first += (balancer.choose(this.two, context) == 0) ? 1 : 0;
		}
		return first / 1_000.0;
	}

	@Test
	void theFasterInstanceWinsEveryPair() {
		TestPickContext context = new TestPickContext(2);
		context.peakEwma[0] = 10;
		context.peakEwma[1] = 100;
		assertThat(shareOfFirst(context)).isEqualTo(1.0);
	}

	@Test
	void inFlightRequestsMultiplyTheCost() {
		TestPickContext context = new TestPickContext(2);
		context.peakEwma[0] = 10;
		context.peakEwma[1] = 100;
		// 10 ms × (10 + 1) = 110 > 100 ms × 1.
		context.inFlight[0] = 10;
		assertThat(shareOfFirst(context)).isZero();
		// 10 ms × (9 + 1) = 100: a tie keeps the first draw.
		context.inFlight[0] = 9;
		assertThat(shareOfFirst(context)).isCloseTo(0.5, within(0.06));
	}

	@Test
	void anInstanceWithoutResponsesYetIsComparedByInFlightRequestsOnly() {
		TestPickContext context = new TestPickContext(2);
		context.peakEwma[1] = 100;
		// New instance (no average) idle, the other busy: the new one is tried.
		context.inFlight[1] = 1;
		assertThat(shareOfFirst(context)).isEqualTo(1.0);
		// New instance with more in flight than the other: not flooded.
		context.inFlight[0] = 2;
		assertThat(shareOfFirst(context)).isZero();
		// Equal: either, as weighted random.
		context.inFlight[0] = 1;
		assertThat(shareOfFirst(context)).isCloseTo(0.5, within(0.06));
	}

	@Test
	void anAverageDecayedToZeroIsNeutralSoInFlightRequestsStillCount() {
		TestPickContext context = new TestPickContext(2);
		// After hours without a response the average underflows to 0: 0 × (5 + 1) must
		// not make the busy instance the cheapest.
		context.peakEwma[0] = 0.0;
		context.inFlight[0] = 5;
		context.peakEwma[1] = 100;
		assertThat(shareOfFirst(context)).isZero();
	}

	@Test
	void choiceCountIsValidatedNamingTheProperty() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new PeakEwmaBalancer(TestPickContext.settings(this.meters), 1))
			.withMessage("choice-count must be an integer >= 2, was 1");
		assertThatIllegalArgumentException().isThrownBy(() -> new PeakEwmaRules(2, Duration.ZERO))
			.withMessage("decay-time must be at least 1ms, was PT0S");
	}

}
