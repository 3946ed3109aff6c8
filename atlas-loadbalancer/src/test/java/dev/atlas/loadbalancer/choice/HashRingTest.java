package dev.atlas.loadbalancer.choice;

import java.util.SplittableRandom;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static org.assertj.core.api.Assertions.assertThat;

/** The ring's bucket index finds what a binary search of the ring finds. */
class HashRingTest {

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 10, 100 })
	void theBucketIndexFindsTheFirstPointClockwise(int instances) {
		InstanceSnapshot snapshot = InstanceSnapshot.of(fleet(instances),
				new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry()));
		InstanceKey[] keys = new InstanceKey[instances];
		for (int i = 0; i < instances; i++) {
			keys[i] = snapshot.key(i);
		}
		for (int virtualNodes : new int[] { 1, 3, 160 }) {
			HashRing ring = HashRing.of(keys, snapshot.effectiveWeights(), virtualNodes);
			long[] points = new long[ring.size()];
			for (int i = 0; i < points.length; i++) {
				points[i] = ring.entry(i);
			}
			SplittableRandom random = new SplittableRandom(42);
			for (int i = 0; i < 20_000; i++) {
				long hash = (i < 4) ? new long[] { Long.MIN_VALUE, Long.MAX_VALUE, 0, -1 }[i] : random.nextLong();
				assertThat(ring.indexOf(hash)).as("hash %d", hash).isEqualTo(binarySearch(points, hash));
			}
			// Exactly on a point: that point.
			for (int i = 0; i < points.length; i++) {
				assertThat(ring.indexOf(points[i])).isEqualTo(i);
			}
		}
	}

	private static int binarySearch(long[] entries, long hash) {
		long point = hash & ~((1L << HashRing.POSITION_BITS) - 1);
		int low = 0;
		int high = entries.length;
		while (low < high) {
			int middle = (low + high) >>> 1;
			if (entries[middle] < point) {
				low = middle + 1;
			}
			else {
				high = middle;
			}
		}
		return (low == entries.length) ? 0 : low;
	}

}
