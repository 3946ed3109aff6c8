package dev.atlas.loadbalancer.instance;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.fleet;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InstanceSnapshotTest {

	private final InstanceAttributesParser parser = new InstanceAttributesParser("s", "version",
			new SimpleMeterRegistry());

	@Test
	void holdsTheSuppliedObjectsAndTheirParsedWeightsSkippingNulls() {
		ServiceInstance a = weighted("a", "2");
		ServiceInstance b = instance("b", "zone", "SH");
		List<ServiceInstance> source = new ArrayList<>();
		source.add(a);
		source.add(null);
		source.add(b);
		InstanceSnapshot snapshot = InstanceSnapshot.of(source, this.parser);
		assertThat(snapshot).hasSize(2);
		assertThat(snapshot.get(0)).isSameAs(a);
		assertThat(snapshot.get(1)).isSameAs(b);
		assertThat(snapshot.effectiveWeights()).containsExactly(2.0, 1.0);
		assertThat(snapshot.attributes(1).cluster()).isEqualTo("sh");
		assertThat(InstanceSnapshot.of(snapshot, this.parser)).isSameAs(snapshot);
	}

	@Test
	void filterKeepsAttributesAndWeightsWithoutReparsing() {
		InstanceSnapshot snapshot = InstanceSnapshot.of(List.of(weighted("a", "2"), weighted("b", "3")), this.parser);
		InstanceSnapshot onlyB = snapshot.filter((i) -> i == 1);
		assertThat(onlyB).extracting(ServiceInstance::getInstanceId).containsExactly("b");
		assertThat(onlyB.effectiveWeight(0)).isEqualTo(3.0);
		assertThat(snapshot.filter((i) -> true)).isSameAs(snapshot);
	}

	@Test
	void effectiveWeightsReplaceConfiguredOnesAndAreValidated() {
		InstanceSnapshot snapshot = InstanceSnapshot.of(List.of(weighted("a", "2"), weighted("b", "3")), this.parser);
		InstanceSnapshot warmed = snapshot.withEffectiveWeights(new double[] { 0.2, 3.0 });
		assertThat(warmed.totalEffectiveWeight()).isEqualTo(3.2);
		assertThat(warmed.attributes(0).weight()).isEqualTo(2.0);
		assertThatIllegalArgumentException().isThrownBy(() -> snapshot.withEffectiveWeights(new double[] { 1 }));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> snapshot.withEffectiveWeights(new double[] { 1, Double.NaN }));
	}

	@Test
	void deriveComparesKeysByIdentityAndKeepsEveryKey() {
		InstanceSnapshot snapshot = InstanceSnapshot.of(fleet(2), this.parser);
		List<Object> keys = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			keys.add(new String("stage"));
		}
		for (int i = 0; i < keys.size(); i++) {
			int value = i;
			assertThat(snapshot.<Integer>derive(keys.get(i), (s) -> value)).isEqualTo(i);
		}
		for (int i = 0; i < keys.size(); i++) {
			assertThat(snapshot.<Integer>derive(keys.get(i), (s) -> -1)).as("memoized for key %d", i).isEqualTo(i);
		}
	}

	@Test
	void deriveMemoizesPerKeyAndSnapshotsHaveIdentityEquality() {
		InstanceSnapshot snapshot = InstanceSnapshot.of(List.of(weighted("a", "2")), this.parser);
		AtomicInteger calls = new AtomicInteger();
		Object key = new Object();
		for (int i = 0; i < 3; i++) {
			assertThat(snapshot.<Integer>derive(key, (s) -> calls.incrementAndGet())).isEqualTo(1);
		}
		assertThat(snapshot.<Integer>derive(new Object(), (s) -> calls.incrementAndGet())).isEqualTo(2);
		InstanceSnapshot twin = InstanceSnapshot.of(List.of(snapshot.get(0)), this.parser);
		assertThat(twin).isNotEqualTo(snapshot);
	}

	@Test
	void snapshotCacheParsesOncePerListObject() {
		SnapshotCache cache = new SnapshotCache(this.parser);
		List<ServiceInstance> list = List.of(weighted("a", "1"));
		InstanceSnapshot first = cache.snapshotOf(list);
		assertThat(cache.snapshotOf(list)).isSameAs(first);
		assertThat(cache.snapshotOf(List.copyOf(new ArrayList<>(list)))).isNotSameAs(first);
		assertThat(cache.snapshotOf(first)).isSameAs(first);
	}

}
