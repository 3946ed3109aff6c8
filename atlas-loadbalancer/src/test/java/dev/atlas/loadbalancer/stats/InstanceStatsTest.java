package dev.atlas.loadbalancer.stats;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.fleet;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

class InstanceStatsTest {

	private final InstanceStats stats = new InstanceStats();

	@Test
	void requestsAndInFlightPerInstanceAcrossNewObjectsForTheSameInstance() {
		this.stats.started(weighted("A", "1"));
		this.stats.started(weighted("A", "1"));
		this.stats.started(weighted("B", "1"));
		this.stats.completed(weighted("A", "1"));
		// A refresh brings new objects for the same instances: counted by instance id.
		ServiceInstance a = weighted("A", "1");
		assertThat(this.stats.requests(a)).isEqualTo(2);
		assertThat(this.stats.inFlight(a)).isEqualTo(1);
		assertThat(this.stats.requests(weighted("C", "1"))).isZero();
		assertThat(this.stats.totalRequests()).isEqualTo(3);
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

}
