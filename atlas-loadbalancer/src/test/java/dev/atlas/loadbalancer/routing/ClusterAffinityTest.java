package dev.atlas.loadbalancer.routing;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.MutableClock;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.kubernetes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

@ExtendWith(OutputCaptureExtension.class)
class ClusterAffinityTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final MutableClock clock = new MutableClock(1_000_000);

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);

	private InstanceSnapshot fleet(ServiceInstance... instances) {
		return InstanceSnapshot.of(List.of(instances), this.parser);
	}

	/** SH×2, BJ×2 as Nacos reports them. */
	private InstanceSnapshot shBj() {
		return fleet(instance("sh1", "nacos.cluster", "SH"), instance("sh2", "nacos.cluster", "SH"),
				instance("bj1", "nacos.cluster", "BJ"), instance("bj2", "nacos.cluster", "BJ"));
	}

	private ClusterAffinity affinity(AffinityRules rules) {
		return new ClusterAffinity(SERVICE, rules, this.meters, this.clock);
	}

	private double spillovers() {
		return this.meters.counter("atlas.affinity.spillover", "service", SERVICE).count();
	}

	private static List<String> ids(List<ServiceInstance> lane) {
		return lane.stream().map(ServiceInstance::getInstanceId).toList();
	}

	@Test
	void callerWithoutClusterUsesAllWithoutSpilloverOrWarning(CapturedOutput output) {
		InstanceSnapshot fleet = shBj();
		assertThat(affinity(AffinityRules.of(null)).apply(fleet)).isSameAs(fleet);
		assertThat(affinity(AffinityRules.of("  ")).apply(fleet)).isSameAs(fleet);
		assertThat(spillovers()).isZero();
		assertThat(output).doesNotContain("WARN");
	}

	@Test
	void rulesGivenLateAreAskedOnceAtTheFirstRequest() {
		List<String> asked = new ArrayList<>();
		ClusterAffinity affinity = new ClusterAffinity(SERVICE, () -> {
			asked.add("asked");
			return AffinityRules.of("BJ");
		}, this.meters, this.clock);
		assertThat(asked).as("not at construction").isEmpty();
		assertThat(ids(affinity.apply(shBj()))).containsExactly("bj1", "bj2");
		assertThat(ids(affinity.apply(shBj()))).containsExactly("bj1", "bj2");
		assertThat(affinity.rules().cluster()).isEqualTo("bj");
		assertThat(asked).hasSize(1);
	}

	@Test
	void ownClusterOnlyCaseInsensitively() {
		assertThat(ids(affinity(AffinityRules.of("sh")).apply(shBj()))).containsExactly("sh1", "sh2");
		assertThat(ids(affinity(AffinityRules.of("Sh")).apply(shBj()))).containsExactly("sh1", "sh2");
		assertThat(spillovers()).isZero();
	}

	@Test
	void noInstanceInOwnClusterSpillsOverCountsAndWarnsOnceNamingClusters(CapturedOutput output) {
		ClusterAffinity affinity = affinity(AffinityRules.of("SH"));
		InstanceSnapshot bjOnly = fleet(instance("bj1", "zone", "BJ"), instance("bj2", "zone", "bj"), instance("none"));
		assertThat(ids(affinity.apply(bjOnly))).containsExactly("bj1", "bj2", "none");
		assertThat(spillovers()).isEqualTo(1);
		affinity.apply(bjOnly);
		affinity.apply(bjOnly);
		assertThat(spillovers()).isEqualTo(3);
		assertThat(output.getOut().lines().filter((l) -> l.contains("spilling over"))).as("rate-limited").hasSize(1);
		assertThat(output.getOut().lines().filter((l) -> l.contains("no instance is in the caller's cluster 'sh'")))
			.hasSize(1);
		assertThat(output).contains("clusters seen: [bj, null]");
		this.clock.advance(Duration.ofSeconds(61));
		affinity.apply(bjOnly);
		assertThat(output.getOut().lines().filter((l) -> l.contains("spilling over"))).hasSize(2);
	}

	@Test
	void tooFewHealthyInOwnClusterSpreadsOverAllHealthy() {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			instances.add(instance("sh" + i, "nacos.cluster", "SH", "nacos.healthy", (i == 0) ? "true" : "false"));
		}
		instances.add(instance("bj1", "nacos.cluster", "BJ", "nacos.healthy", "true"));
		instances.add(instance("bj2", "nacos.cluster", "BJ", "nacos.healthy", "true"));
		InstanceSnapshot fleet = InstanceSnapshot.of(instances, this.parser);
		// 1 of 10 healthy: below a 50 % threshold, so spill over to every healthy
		// instance.
		assertThat(ids(affinity(new AffinityRules("SH", 0.5, 1)).apply(fleet))).containsExactly("sh0", "bj1", "bj2");
		assertThat(spillovers()).isEqualTo(1);
		// The default 10 % threshold is met by 1 of 10: stay in SH, on its healthy
		// instance.
		assertThat(ids(affinity(AffinityRules.of("SH")).apply(fleet))).containsExactly("sh0");
		// min-instances 2 is not met by 1 healthy SH instance.
		assertThat(ids(affinity(new AffinityRules("SH", 0.1, 2)).apply(fleet))).containsExactly("sh0", "bj1", "bj2");
	}

	@Test
	void missingClusterMetadataCountsAsAnotherCluster() {
		InstanceSnapshot fleet = fleet(instance("sh1", "zone", "sh"), instance("x"));
		assertThat(ids(affinity(AffinityRules.of("sh")).apply(fleet))).containsExactly("sh1");
	}

	@Test
	void kubernetesPodsRouteByTheirZoneLabel() {
		// Real Spring Cloud Kubernetes instances with add-pod-labels=true: the zone is
		// the
		// pod label topology.kubernetes.io/zone, no metadata names one.
		InstanceSnapshot pods = InstanceSnapshot.of(
				List.of(kubernetes("a1", Map.of("topology.kubernetes.io/zone", "eu-west-1a", "app", "user")),
						kubernetes("b1", Map.of("topology.kubernetes.io/zone", "eu-west-1b", "app", "user")),
						kubernetes("a2", Map.of("topology.kubernetes.io/zone", "eu-west-1a", "app", "user"))),
				this.parser);
		ClusterAffinity affinity = new ClusterAffinity("svc", AffinityRules.of("eu-west-1a"), new SimpleMeterRegistry(),
				Clock.systemUTC());
		assertThat(ids(affinity.apply(pods))).containsExactly("a1", "a2");
	}

	@Test
	void rulesAreValidated() {
		assertThatIllegalArgumentException().isThrownBy(() -> new AffinityRules("a", 1.5, 1))
			.withMessageContaining("min-healthy-ratio");
		assertThatIllegalArgumentException().isThrownBy(() -> new AffinityRules("a", 0.1, -1))
			.withMessageContaining("min-instances");
	}

}
