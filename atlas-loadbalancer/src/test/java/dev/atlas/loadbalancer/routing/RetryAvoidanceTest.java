package dev.atlas.loadbalancer.routing;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;

import com.sun.management.ThreadMXBean;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static org.assertj.core.api.Assertions.assertThat;

class RetryAvoidanceTest {

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version",
			new SimpleMeterRegistry());

	private static ServiceInstance at(String id, String host, int port) {
		return new DefaultServiceInstance(id, SERVICE, host, port, false, Map.of());
	}

	@Test
	void theFailedInstanceIsMatchedByIdHostAndPort() {
		InstanceSnapshot fleet = InstanceSnapshot.of(List.of(at("x", "10.0.0.1", 8080), at("x", "10.0.0.2", 8080),
				at("x", "10.0.0.1", 8081), at(null, "10.0.0.1", 8080)), this.parser);
		// A new object for the first instance: only it is left out.
		assertThat(hosts(RetryAvoidance.avoid(fleet, at("x", "10.0.0.1", 8080)))).containsExactly("x@10.0.0.2:8080",
				"x@10.0.0.1:8081", "null@10.0.0.1:8080");
		assertThat(hosts(RetryAvoidance.avoid(fleet, at(null, "10.0.0.1", 8080)))).containsExactly("x@10.0.0.1:8080",
				"x@10.0.0.2:8080", "x@10.0.0.1:8081");
		// Unknown: nothing is left out.
		assertThat(RetryAvoidance.avoid(fleet, at("y", "10.0.0.1", 8080))).isSameAs(fleet);
	}

	@Test
	void theReducedSetIsMemoizedPerSnapshotSoItsTablesAreToo() {
		InstanceSnapshot fleet = InstanceSnapshot.of(List.of(at("a", "h", 1), at("b", "h", 2), at("c", "h", 3)),
				this.parser);
		InstanceSnapshot withoutA = RetryAvoidance.avoid(fleet, at("a", "h", 1));
		assertThat(RetryAvoidance.avoid(fleet, at("a", "h", 1))).isSameAs(withoutA);
		assertThat(RetryAvoidance.avoid(fleet, at("b", "h", 2))).isNotSameAs(withoutA);
		// The only candidate stays, so the caller sees its own error.
		InstanceSnapshot single = InstanceSnapshot.of(List.of(at("a", "h", 1)), this.parser);
		assertThat(RetryAvoidance.avoid(single, at("a", "h", 1))).isSameAs(single);
	}

	@Test
	void aRetryOnAKnownSetAllocatesNothing() {
		InstanceSnapshot fleet = InstanceSnapshot.of(List.of(at("a", "h", 1), at("b", "h", 2), at("c", "h", 3)),
				this.parser);
		ServiceInstance failed = at("c", "h", 3);
		ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
		long thread = Thread.currentThread().getId();
		InstanceSnapshot reduced = RetryAvoidance.avoid(fleet, failed);
		for (int round = 0; round < 3; round++) {
			long before = threads.getThreadAllocatedBytes(thread);
			for (int i = 0; i < 100_000; i++) {
				if (RetryAvoidance.avoid(fleet, failed) != reduced) {
					throw new AssertionError("not memoized");
				}
			}
			long allocated = threads.getThreadAllocatedBytes(thread) - before;
			if (round > 0) {
				assertThat(allocated).as("bytes allocated by 100,000 retries").isLessThan(4_096);
			}
		}
	}

	private static List<String> hosts(InstanceSnapshot snapshot) {
		return snapshot.stream()
			.map((instance) -> instance.getInstanceId() + "@" + instance.getHost() + ":" + instance.getPort())
			.toList();
	}

}
