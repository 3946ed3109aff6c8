package dev.atlas.loadbalancer.stats;

import java.util.List;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

class InstanceStatsTest {

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version",
			new SimpleMeterRegistry());

	private final InstanceStats stats = new InstanceStats();

	private InstanceSnapshot snapshot(List<ServiceInstance> instances) {
		return InstanceSnapshot.of(instances, this.parser);
	}

	@Test
	void picksByPositionAddUpPerInstanceAcrossRefreshes() {
		InstanceSnapshot first = snapshot(List.of(weighted("A", "1"), weighted("B", "1")));
		this.stats.picked(first, 0);
		this.stats.picked(first, 0);
		this.stats.picked(first, 1);
		// A refresh: new objects for the same instances, in another order.
		InstanceSnapshot second = snapshot(List.of(weighted("B", "1"), weighted("A", "1")));
		this.stats.picked(second, 1);
		assertThat(this.stats.picks(weighted("A", "1"))).isEqualTo(3);
		assertThat(this.stats.picks(weighted("B", "1"))).isEqualTo(1);
		assertThat(this.stats.picks(weighted("C", "1"))).isZero();
		assertThat(this.stats.totalPicks()).isEqualTo(4);
	}

	@Test
	void inFlightNeverGoesNegative() {
		ServiceInstance a = weighted("A", "1");
		this.stats.started(a);
		this.stats.completed(a);
		this.stats.completed(a);
		assertThat(this.stats.inFlight(a)).isZero();
	}

	@Test
	void underChurnOnlyInstancesUnusedSinceThePreviousCleanUpAreForgotten() {
		InstanceStats stats = new InstanceStats(4);
		List<ServiceInstance> first = List.of(weighted("A", "1"), weighted("B", "1"), weighted("C", "1"),
				weighted("D", "1"));
		InstanceSnapshot s1 = snapshot(first);
		stats.picked(s1, 0);
		stats.picked(s1, 0);
		stats.started(first.get(1));

		// E meets a full table: everything was seen since the (initial) clean-up, nothing is forgotten.
		stats.picked(snapshot(List.of(weighted("E", "1"))), 0);
		assertThat(stats.size()).isEqualTo(5);
		// F, G, H: the threshold doubled to 8, no clean-up on the way.
		stats.picked(snapshot(List.of(weighted("F", "1"), weighted("G", "1"), weighted("H", "1"))), 0);
		assertThat(stats.size()).isEqualTo(8);

		// I meets the doubled threshold: A (no pick since), C and D (idle, not in a new list) are forgotten;
		// B has a request in flight; E to H were seen since the previous clean-up.
		stats.picked(snapshot(List.of(weighted("I", "1"))), 0);
		assertThat(stats.size()).isEqualTo(6);
		assertThat(stats.picks(first.get(0))).isZero();
		assertThat(stats.inFlight(first.get(1))).isEqualTo(1);
		assertThat(stats.totalPicks()).as("forgotten picks still count").isEqualTo(5);

		// The first snapshot resolves its counters again: a pick on it still counts.
		stats.picked(s1, 2);
		assertThat(stats.picks(first.get(2))).isEqualTo(1);
		assertThat(stats.totalPicks()).isEqualTo(6);
	}

	@Test
	void aFleetLargerThanTheThresholdIsTrackedWhole() {
		InstanceStats stats = new InstanceStats(4);
		InstanceSnapshot big = snapshot(fleet(10));
		for (int i = 0; i < big.size(); i++) {
			stats.picked(big, i);
		}
		assertThat(stats.size()).isEqualTo(10);
		for (int i = 0; i < big.size(); i++) {
			assertThat(stats.picks(big.get(i))).isEqualTo(1);
		}
		assertThat(stats.totalPicks()).isEqualTo(10);
	}

}
