package dev.atlas.loadbalancer.stats;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.fleet;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class InstanceStatsTest {

	private final InstanceStats stats = new InstanceStats();

	@Test
	void requestsAndInFlightPerInstanceAcrossNewObjectsForTheSameInstance() {
		this.stats.started(weighted("A", "1"));
		this.stats.started(weighted("A", "1"));
		this.stats.started(weighted("B", "1"));
		this.stats.completed(weighted("A", "1"));
		// A refresh brings new objects for the same instances: counted by id, host and
		// port.
		ServiceInstance a = weighted("A", "1");
		assertThat(this.stats.requests(a)).isEqualTo(2);
		assertThat(this.stats.inFlight(a)).isEqualTo(1);
		assertThat(this.stats.requests(weighted("C", "1"))).isZero();
		assertThat(this.stats.totalRequests()).isEqualTo(3);
	}

	@Test
	void recordingATrackedInstanceAllocatesNothing() {
		// Two instances share an id, so the lookup goes through a slot of two.
		ServiceInstance a = new DefaultServiceInstance("same", "user-service", "10.0.0.1", 8080, false, Map.of());
		ServiceInstance b = new DefaultServiceInstance("same", "user-service", "10.0.0.2", 8080, false, Map.of());
		ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
		long thread = Thread.currentThread().getId();
		for (int round = 0; round < 3; round++) {
			long before = threads.getThreadAllocatedBytes(thread);
			for (int i = 0; i < 100_000; i++) {
				this.stats.started(a);
				this.stats.started(b);
				this.stats.completed(a, 1_000_000);
				this.stats.completed(b, 1_000_000);
			}
			long allocated = threads.getThreadAllocatedBytes(thread) - before;
			if (round == 0) {
				// The first round creates the two entries (and runs in the interpreter).
				continue;
			}
			// 400,000 calls: not even one byte each (slack for the measurement itself).
			assertThat(allocated).as("bytes allocated by 400,000 calls").isLessThan(4_096);
		}
		assertThat(this.stats.requests(a)).isEqualTo(300_000);
		assertThat(this.stats.requests(b)).isEqualTo(300_000);
	}

	@Test
	void aCompletionWithoutAStartNeverMakesInFlightNegativeNorSkewsLaterCounts() {
		ServiceInstance a = weighted("A", "1");
		this.stats.completed(a);
		this.stats.started(a);
		this.stats.completed(a);
		this.stats.completed(a);
		assertThat(this.stats.inFlight(a)).isZero();
		this.stats.started(a);
		assertThat(this.stats.inFlight(a)).isEqualTo(1);
	}

	@Test
	void underChurnOnlyInstancesIdleSinceThePreviousCleanUpAreForgotten() {
		InstanceStats stats = new InstanceStats(4);
		List<ServiceInstance> first = fleet(4);
		first.forEach(stats::started);
		first.forEach(stats::completed);
		stats.started(first.get(0));
		stats.completed(first.get(0));
		stats.started(first.get(1));

		// A fifth instance meets a full table: every instance had a request since the
		// (initial) clean-up.
		stats.started(weighted("E", "1"));
		stats.completed(weighted("E", "1"));
		assertThat(stats.size()).isEqualTo(5);
		stats.started(weighted("F", "1"));
		stats.started(weighted("G", "1"));
		stats.started(weighted("H", "1"));
		assertThat(stats.size()).as("the threshold doubled to 8").isEqualTo(8);
		stats.started(first.get(0));

		// I meets the doubled threshold: i2 and i3 had no request since the previous
		// clean-up and none in
		// flight; i0 and E had one, i1 and F to H have theirs in flight.
		stats.started(weighted("I", "1"));
		assertThat(stats.size()).isEqualTo(7);
		assertThat(stats.requests(first.get(2))).isZero();
		assertThat(stats.requests(first.get(0))).isEqualTo(3);
		assertThat(stats.inFlight(first.get(1))).isEqualTo(1);
		assertThat(stats.totalRequests()).as("forgotten requests still count").isEqualTo(12);
	}

	/**
	 * 100 instances churned through a service of 10 (ten rolling deployments, one a
	 * minute): the table keeps the live ones and those called within the last one to two
	 * idle windows, not the history.
	 */
	@Test
	void instancesThatLeftAreForgottenOneToTwoIdleWindowsAfterTheirLastRequest() {
		AtomicLong now = new AtomicLong();
		InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), now::get);
		long window = stats.idleWindowNanos();
		assertThat(window).as("max(1 min, 6 decay times)").isEqualTo(Duration.ofMinutes(1).toNanos());
		List<ServiceInstance> live = List.of();
		int maxTracked = 0;
		for (int deployment = 0; deployment < 10; deployment++) {
			int generation = deployment;
			live = IntStream.range(0, 10).mapToObj((i) -> weighted("g" + generation + "-" + i, "1")).toList();
			for (int second = 0; second < 60; second++) {
				now.addAndGet(1_000_000_000L);
				live.forEach((instance) -> {
					stats.started(instance);
					stats.completed(instance, 1_000_000);
				});
				maxTracked = Math.max(maxTracked, stats.size());
			}
		}
		assertThat(maxTracked).as("live plus two windows of departed instances").isLessThanOrEqualTo(30);
		// Two more windows with the last generation only.
		for (int second = 0; second < 120; second++) {
			now.addAndGet(1_000_000_000L);
			live.forEach((instance) -> {
				stats.started(instance);
				stats.completed(instance, 1_000_000);
			});
		}
		assertThat(stats.size()).isEqualTo(10);
		assertThat(stats.requests(live.get(0))).as("the live keep their counts").isEqualTo(180);
		assertThat(stats.totalRequests()).as("forgotten requests still count").isEqualTo(10 * 60 * 10 + 10 * 120);
		stats.decayTime(Duration.ofSeconds(30));
		assertThat(stats.idleWindowNanos()).as("6 decay times").isEqualTo(Duration.ofMinutes(3).toNanos());
	}

	@Test
	void anInstanceInFlightIsNeverForgottenHoweverLongItsRequestTakes() {
		AtomicLong now = new AtomicLong();
		InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), now::get);
		ServiceInstance slow = weighted("slow", "1");
		ServiceInstance other = weighted("other", "1");
		stats.started(slow);
		for (int minute = 0; minute < 5; minute++) {
			now.addAndGet(Duration.ofMinutes(1).toNanos());
			stats.started(other);
			stats.completed(other, 1_000_000);
		}
		assertThat(stats.inFlight(slow)).isEqualTo(1);
		stats.completed(slow, Duration.ofMinutes(5).toNanos());
		assertThat(stats.inFlight(slow)).isZero();
		assertThat(stats.serviceInFlight()).isZero();
	}

	@Test
	void aFleetLargerThanTheThresholdIsTrackedWhole() {
		InstanceStats stats = new InstanceStats(4);
		List<ServiceInstance> big = fleet(10);
		big.forEach(stats::started);
		assertThat(stats.size()).isEqualTo(10);
		big.forEach((instance) -> assertThat(stats.requests(instance)).isEqualTo(1));
	}

	@Test
	void peakEwmaJumpsToASlowerResponseBlendsAFasterOneAndDecaysWhileIdle() {
		AtomicLong now = new AtomicLong();
		InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), now::get);
		ServiceInstance a = weighted("A", "1");
		assertThat(stats.peakEwmaMillis(a)).isNaN();
		stats.started(a);
		stats.completed(a, 10_000_000);
		assertThat(stats.peakEwmaMillis(a)).isEqualTo(10.0);
		// A slower response replaces the average at once.
		now.addAndGet(1_000_000_000L);
		stats.started(a);
		stats.completed(a, 100_000_000);
		assertThat(stats.peakEwmaMillis(a)).isEqualTo(100.0);
		// Idle for one decay time: 100 / e.
		now.addAndGet(10_000_000_000L);
		assertThat(stats.peakEwmaMillis(a)).isCloseTo(100 / Math.E, within(1e-9));
		// A faster response now, one decay time after the previous one: Finagle's
		// 100 × w + 10 × (1 - w), w = e^-1.
		stats.started(a);
		stats.completed(a, 10_000_000);
		assertThat(stats.peakEwmaMillis(a)).isCloseTo(100 / Math.E + 10 * (1 - 1 / Math.E), within(1e-9));
		// Reading does not change it.
		assertThat(stats.peakEwmaMillis(a)).isCloseTo(100 / Math.E + 10 * (1 - 1 / Math.E), within(1e-9));
	}

	@Test
	void theServicesInFlightTotalFollowsStartsAndCompletions() {
		ServiceInstance a = weighted("A", "1");
		ServiceInstance b = weighted("B", "1");
		this.stats.started(a);
		this.stats.started(a);
		this.stats.started(b);
		assertThat(this.stats.serviceInFlight()).isEqualTo(3);
		this.stats.completed(a);
		// A completion without a start changes nothing.
		this.stats.completed(weighted("C", "1"));
		this.stats.completed(b);
		this.stats.completed(b);
		assertThat(this.stats.serviceInFlight()).isEqualTo(1);
	}

	@Test
	void aFailureNeverLowersTheLatencyAveragesNorStartsThem() {
		AtomicLong now = new AtomicLong();
		InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), now::get);
		ServiceInstance instance = fleet(1).get(0);
		stats.started(instance);
		stats.completed(instance, 1_000_000, true);
		assertThat(stats.latencyMillis(instance)).as("no average from a failure").isNaN();
		assertThat(stats.peakEwmaMillis(instance)).isNaN();
		stats.started(instance);
		stats.completed(instance, 50_000_000, false);
		for (int i = 0; i < 20; i++) {
			now.addAndGet(1_000_000);
			stats.started(instance);
			stats.completed(instance, 1_000_000, true);
		}
		assertThat(stats.latencyMillis(instance)).as("fast failures keep the plain average").isEqualTo(50.0);
		assertThat(stats.peakEwmaMillis(instance)).as("and the peak one, decayed by time alone")
			.isCloseTo(50.0 * Math.exp(-20.0 / 10_000), within(1e-9));
		assertThat(stats.inFlight(instance)).isZero();
	}

	@Test
	void theFailureRateRisesWithFailuresFallsWithSuccessesAndDecaysWhenIdle() {
		AtomicLong now = new AtomicLong();
		InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), now::get);
		ServiceInstance instance = fleet(1).get(0);
		assertThat(stats.anyFailing()).isFalse();
		stats.started(instance);
		stats.completed(instance, -1, true);
		assertThat(stats.failureRate(instance)).as("one failure among successes is forgiven (0.25 < 0.3)").isZero();
		assertThat(stats.anyFailing()).isTrue();
		for (int i = 0; i < 2; i++) {
			stats.started(instance);
			stats.completed(instance, -1, true);
		}
		// 1 - 0.75^3
		assertThat(stats.failureRate(instance)).isCloseTo(0.578125, within(1e-9));
		stats.started(instance);
		stats.completed(instance, -1, false);
		assertThat(stats.failureRate(instance)).isCloseTo(0.578125 * 0.75, within(1e-9));
		now.addAndGet(Duration.ofSeconds(2).toNanos());
		assertThat(stats.failureRate(instance)).as("decays while idle")
			.isCloseTo(0.578125 * 0.75 * Math.exp(-0.2), within(1e-9));
		now.addAndGet(Duration.ofSeconds(8).toNanos());
		assertThat(stats.failureRate(instance)).as("one decay time idle: below 0.3, reads 0").isZero();
		assertThat(stats.anyFailing()).as("within 1.2 decay times of the last failure").isTrue();
		now.addAndGet(Duration.ofSeconds(3).toNanos());
		assertThat(stats.anyFailing()).as("13 s after the last failure: every rate reads 0").isFalse();
		now.addAndGet(Duration.ofMinutes(5).toNanos());
		stats.started(instance);
		stats.completed(instance, -1, false);
		assertThat(stats.failureRate(instance)).isZero();
	}

	@Test
	void theFailureStatusesAreEvery5xxAnd429ByDefaultAndConfigurable() {
		assertThat(FailureStatuses.DEFAULT.isFailure(500)).isTrue();
		assertThat(FailureStatuses.DEFAULT.isFailure(503)).isTrue();
		assertThat(FailureStatuses.DEFAULT.isFailure(599)).isTrue();
		assertThat(FailureStatuses.DEFAULT.isFailure(429)).isTrue();
		assertThat(FailureStatuses.DEFAULT.isFailure(404)).isFalse();
		assertThat(FailureStatuses.DEFAULT.isFailure(200)).isFalse();
		assertThat(FailureStatuses.DEFAULT.isFailure(-1)).isFalse();
		assertThat(FailureStatuses.DEFAULT.isFailure(999)).isFalse();
		FailureStatuses custom = FailureStatuses.of(List.of(" 503 ", "4XX"));
		assertThat(custom.isFailure(503)).isTrue();
		assertThat(custom.isFailure(500)).isFalse();
		assertThat(custom.isFailure(404)).isTrue();
		assertThat(custom.entries()).containsExactly("503", "4xx");
		assertThat(FailureStatuses.of(List.of()).isFailure(500)).isFalse();
		assertThatIllegalArgumentException().isThrownBy(() -> FailureStatuses.of(List.of("6xx")))
			.withMessageContaining("'6xx' is not an HTTP status")
			.withMessageContaining("1xx to 5xx");
		assertThatIllegalArgumentException().isThrownBy(() -> FailureStatuses.of(List.of("42")));
	}

}
