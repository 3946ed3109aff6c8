package dev.atlas.loadbalancer.stats;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.fleet;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
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

}
