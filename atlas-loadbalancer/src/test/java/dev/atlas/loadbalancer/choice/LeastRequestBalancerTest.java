package dev.atlas.loadbalancer.choice;

import java.util.List;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/**
 * Least request (power of two choices) with a fixed seed and set in-flight counts.
 * Tolerances in percentage points of a share over 10,000 picks (sigma at most 0.5
 * points).
 */
class LeastRequestBalancerTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private LeastRequestBalancer balancer(LeastRequestRules rules) {
		SplittableRandom seeded = new SplittableRandom(42);
		return new LeastRequestBalancer(TestPickContext.settings(this.meters), rules, () -> seeded);
	}

	private InstanceSnapshot snapshot(List<ServiceInstance> instances) {
		return InstanceSnapshot.of(instances, new InstanceAttributesParser(SERVICE, "version", this.meters));
	}

	private static double[] shares(LeastRequestBalancer balancer, InstanceSnapshot snapshot, TestPickContext context,
			int picks) {
		double[] shares = new double[snapshot.size()];
		for (int i = 0; i < picks; i++) {
			shares[balancer.choose(snapshot, context)] += 1.0 / picks;
		}
		return shares;
	}

	@Test
	void withNothingInFlightSharesFollowWeights() {
		InstanceSnapshot snapshot = snapshot(List.of(weighted("A", "1"), weighted("B", "3")));
		double[] shares = shares(balancer(LeastRequestRules.DEFAULTS), snapshot, new TestPickContext(2), 10_000);
		assertThat(shares[1]).isCloseTo(0.75, within(0.02));
	}

	@Test
	void thePairIsTwoDistinctInstancesSoTheLessLoadedAlwaysWins() {
		// With replacement, A would be drawn twice a quarter of the time.
		InstanceSnapshot snapshot = snapshot(fleet(2));
		TestPickContext context = new TestPickContext(2);
		context.inFlight[0] = 1;
		assertThat(shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 1_000)[1]).isEqualTo(1.0,
				within(1e-9));
	}

	@Test
	void distinctPairsAlsoWithUnequalWeights() {
		InstanceSnapshot snapshot = snapshot(List.of(weighted("A", "1"), weighted("B", "2")));
		TestPickContext context = new TestPickContext(2);
		context.inFlight[0] = 1;
		context.inFlight[1] = 4;
		// A: 1/1 = 1 < B: 4/2 = 2: A wins every pair. B is kept only when drawn first
		// (2/3) and again on all five draws of the other (the first and four redraws).
		double[] shares = shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 10_000);
		assertThat(shares[1]).isCloseTo(Math.pow(2 / 3.0, 6), within(0.02));
	}

	@Test
	void inFlightCountsRelativeToWeight() {
		InstanceSnapshot snapshot = snapshot(List.of(weighted("A", "1"), weighted("B", "4")));
		TestPickContext context = new TestPickContext(2);
		context.inFlight[0] = 2;
		context.inFlight[1] = 6;
		// bias 1: A 2/1 = 2 > B 6/4 = 1.5 -> B whenever both are drawn.
		double[] bias1 = shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 10_000);
		assertThat(bias1[1]).isGreaterThan(0.99);
		// bias 2: A 4/1 = 4 < B 36/4 = 9 -> A whenever both are drawn (B first, then
		// five draws of B: 0.8^6 = 26 %).
		double[] bias2 = shares(balancer(new LeastRequestRules(2, 2.0)), snapshot, context, 10_000);
		assertThat(bias2[1]).isCloseTo(Math.pow(0.8, 6), within(0.02));
	}

	@Test
	void biasZeroIgnoresInFlightRequests() {
		InstanceSnapshot snapshot = snapshot(List.of(weighted("A", "1"), weighted("B", "3")));
		TestPickContext context = new TestPickContext(2);
		context.inFlight[1] = 100;
		double[] shares = shares(balancer(new LeastRequestRules(2, 0)), snapshot, context, 10_000);
		assertThat(shares[1]).isCloseTo(0.75, within(0.02));
	}

	@Test
	void anIdleInstanceBeatsABusyHeavierOne() {
		InstanceSnapshot snapshot = snapshot(List.of(weighted("A", "1"), weighted("B", "100")));
		TestPickContext context = new TestPickContext(2);
		context.inFlight[1] = 1;
		double[] shares = shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 10_000);
		// A is drawn first 1/101 of the time; else among up to five draws of the other:
		// 1 - (100/101)^5 = 4.9 %.
		assertThat(shares[0]).isCloseTo(1 / 101.0 + 100 / 101.0 * (1 - Math.pow(100 / 101.0, 5)), within(0.01));
	}

	@Test
	void aSlowInstanceWithRequestsPilingUpGetsFew() {
		InstanceSnapshot snapshot = snapshot(fleet(5));
		TestPickContext context = new TestPickContext(5);
		for (int i = 0; i < 4; i++) {
			context.inFlight[i] = 2;
		}
		context.inFlight[4] = 10;
		double[] shares = shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 10_000);
		assertThat(shares[4]).isZero();
		assertThat(shares[0]).isCloseTo(0.25, within(0.02));
	}

	@Test
	void drainedInstancesAreNeverDrawn() {
		InstanceSnapshot snapshot = snapshot(List.of(weighted("A", "0"), weighted("B", "1"), weighted("C", "1")));
		TestPickContext context = new TestPickContext(3);
		context.inFlight[1] = 5;
		context.inFlight[2] = 5;
		assertThat(shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 1_000)[0]).isZero();
	}

	@Test
	void moreChoicesFindTheLeastLoadedMoreOften() {
		InstanceSnapshot snapshot = snapshot(fleet(10));
		TestPickContext context = new TestPickContext(10);
		for (int i = 0; i < 10; i++) {
			context.inFlight[i] = 10 - i;
		}
		double two = shares(balancer(LeastRequestRules.DEFAULTS), snapshot, context, 10_000)[9];
		double four = shares(balancer(new LeastRequestRules(4, 1.0)), snapshot, context, 10_000)[9];
		// P(the least loaded is among the draws): 2/10 for two, about 4/10 for four.
		assertThat(two).isCloseTo(0.2, within(0.02));
		assertThat(four).isGreaterThan(0.3);
	}

	@Test
	void rulesAreValidatedNamingTheProperty() {
		assertThatIllegalArgumentException().isThrownBy(() -> new LeastRequestRules(1, 1.0))
			.withMessage("choice-count must be an integer >= 2, was 1");
		assertThatIllegalArgumentException().isThrownBy(() -> new LeastRequestRules(2, -1))
			.withMessage("active-request-bias must be a finite number >= 0, was -1.0");
		assertThatIllegalArgumentException().isThrownBy(() -> new LeastRequestRules(2, Double.NaN))
			.withMessageStartingWith("active-request-bias");
	}

}
