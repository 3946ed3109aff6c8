package dev.atlas.loadbalancer.orca;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.loadbalancer.TestInstances;
import dev.atlas.loadbalancer.instance.InstanceKey;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/** gRFC A58's weight rules, on a ticker moved by hand and a scheduler run by hand. */
@ExtendWith(OutputCaptureExtension.class)
class ReportedLoadTest {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final AtomicInteger scheduled = new AtomicInteger();

	private final ReportedLoad load = new ReportedLoad(WeightRules.DEFAULTS,
			(task, delay) -> this.scheduled.incrementAndGet(), this.now::get);

	private final InstanceKey a = InstanceKey.of(TestInstances.instance("a"));

	private final InstanceKey b = InstanceKey.of(TestInstances.instance("b"));

	@Test
	void theWeightIsQpsOverUtilizationPlusTheErrorPenalty() {
		this.load.record(this.a, new LoadReport(0.5, 0, 100, 10));
		advance(Duration.ofSeconds(10));
		this.load.record(this.a, new LoadReport(0.5, 0, 100, 10));
		this.load.update();
		// 100 / (0.5 + 10 / 100 × 1.0)
		assertThat(this.load.weight(this.a)).isCloseTo(100 / 0.6, within(1e-9));
	}

	@Test
	void aWeightIsUsedOnlyAfterTheBlackoutPeriod() {
		this.load.record(this.a, new LoadReport(0.5, 0, 100, 0));
		advance(Duration.ofSeconds(9));
		this.load.update();
		assertThat(this.load.weight(this.a)).isZero();
		advance(Duration.ofSeconds(1));
		this.load.update();
		// the latest report's weight, once reporting for 10 s
		assertThat(this.load.weight(this.a)).isEqualTo(200);
	}

	@Test
	void aWeightExpiresAfterThreeMinutesWithoutReportAndTheBlackoutStartsOver() {
		this.load.record(this.a, new LoadReport(0.5, 0, 100, 0));
		advance(Duration.ofSeconds(10));
		this.load.update();
		assertThat(this.load.weight(this.a)).isEqualTo(200);
		advance(Duration.ofMinutes(3));
		this.load.update();
		assertThat(this.load.weight(this.a)).isZero();
		assertThat(this.load.trackedInstances()).as("an expired instance is forgotten").isZero();
		this.load.record(this.a, new LoadReport(0.5, 0, 100, 0));
		advance(Duration.ofSeconds(5));
		this.load.update();
		assertThat(this.load.weight(this.a)).as("in a new blackout").isZero();
	}

	@Test
	void aHeaderIsRecordedAndOneThatCannotBeReadIsLoggedOncePerInstance(CapturedOutput output) {
		this.load.recordHeader("svc", this.a, "TEXT cpu_utilization=0.5, rps_fractional=100");
		assertThat(this.load.trackedInstances()).as("a report read from its header").isOne();
		assertThat(this.scheduled).as("the first answer starts a recomputation").hasValue(1);
		for (int i = 0; i < 3; i++) {
			this.load.recordHeader("svc", this.b, "TEXT cpu_utilization=lots");
		}
		this.load.recordHeader("svc", this.b, null);
		assertThat(this.load.trackedInstances()).as("nothing recorded for b").isOne();
		assertThat(output.getOut().lines().filter((line) -> line.contains("cannot read its endpoint-load-metrics")))
			.as("one WARN for b, naming the service, the instance and the header")
			.singleElement(InstanceOfAssertFactories.STRING)
			.contains("WARN", "'svc'", this.b.address(), "'TEXT cpu_utilization=lots'");
		advance(Duration.ofSeconds(1));
		this.load.recordHeader("svc", this.b, "not a report");
		assertThat(this.scheduled).as("an answer whose report cannot be read still counts as an answer").hasValue(2);
	}

	@Test
	void aReportWithoutRequestsOrUtilizationIsIgnored() {
		this.load.record(this.a, new LoadReport(0, 0, 100, 0));
		this.load.record(this.b, new LoadReport(0.5, 0, 0, 0));
		assertThat(this.load.trackedInstances()).isZero();
	}

	@Test
	void aRecomputationIsScheduledAtMostOncePerUpdatePeriod() {
		this.load.record(this.a, new LoadReport(0.5, 0, 100, 0));
		this.load.record(this.b, new LoadReport(0.5, 0, 100, 0));
		this.load.answered();
		assertThat(this.scheduled).hasValue(1);
		advance(Duration.ofMillis(999));
		this.load.answered();
		assertThat(this.scheduled).hasValue(1);
		advance(Duration.ofMillis(1));
		this.load.answered();
		assertThat(this.scheduled).hasValue(2);
	}

	@Test
	void listenersAreToldAfterEachRecomputationUntilTheyGiveUp() {
		AtomicInteger calls = new AtomicInteger();
		this.load.subscribe(() -> calls.incrementAndGet() < 2);
		this.load.update();
		this.load.update();
		this.load.update();
		assertThat(calls).hasValue(2);
	}

	@Test
	void rulesChangedAtRuntimeApplyFromTheNextRecomputation() {
		AtomicReference<WeightRules> rules = new AtomicReference<>(WeightRules.DEFAULTS);
		ReportedLoad changing = new ReportedLoad(rules::get, (task, delay) -> {
		}, this.now::get);
		changing.record(this.a, new LoadReport(0.5, 0, 100, 0));
		advance(Duration.ofSeconds(2));
		changing.update();
		assertThat(changing.weight(this.a)).as("in the 10 s blackout").isZero();
		rules.set(new WeightRules(Duration.ofSeconds(1), Duration.ofMinutes(3), Duration.ofSeconds(1), 1.0));
		changing.update();
		assertThat(changing.weight(this.a)).as("past a 1 s blackout").isEqualTo(200);
	}

	@Test
	void invalidRulesNameTheProperty() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new WeightRules(Duration.ZERO, Duration.ofMinutes(3), Duration.ofMillis(50), 1))
			.withMessageContaining("weight-update-period must be a duration >= 100ms");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new WeightRules(Duration.ZERO, Duration.ofMinutes(3), Duration.ofSeconds(1), -1))
			.withMessageContaining("error-utilization-penalty");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new WeightRules(Duration.ofSeconds(-1), Duration.ofMinutes(3), Duration.ofSeconds(1), 1))
			.withMessageContaining("blackout-period");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new WeightRules(Duration.ZERO, Duration.ZERO, Duration.ofSeconds(1), 1))
			.withMessageContaining("weight-expiration-period");
	}

	private void advance(Duration duration) {
		this.now.addAndGet(duration.toNanos());
	}

}
