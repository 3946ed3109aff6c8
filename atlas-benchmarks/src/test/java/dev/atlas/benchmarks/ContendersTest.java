package dev.atlas.benchmarks;

import java.util.HashSet;
import java.util.Set;

import io.micrometer.core.instrument.Counter;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmarked load balancers are wired as intended: each picks real instances of its
 * lane.
 */
class ContendersTest {

	private final Contenders contenders = new Contenders(100);

	@Test
	void everyContenderPicksInstancesOfTheFleet() {
		this.contenders.prime();
		Set<ServiceInstance> fleet = Set.copyOf(this.contenders.fleet);
		for (int i = 0; i < 200; i++) {
			assertThat(fleet).contains(Contenders.pick(this.contenders.springRoundRobin, this.contenders.plain),
					Contenders.pick(this.contenders.springRandom, this.contenders.plain),
					Contenders.pick(this.contenders.springWeighted, this.contenders.plain),
					Contenders.pick(this.contenders.atlasWeightedRandom, this.contenders.plain),
					Contenders.pick(this.contenders.atlasSmoothRoundRobin, this.contenders.plain),
					this.contenders.engineWeightedRandom.choose(this.contenders.fleet),
					this.contenders.engineSmoothRoundRobin.choose(this.contenders.fleet));
		}
	}

	@Test
	void nacosStaysInTheCallersCluster() {
		for (int i = 0; i < 200; i++) {
			ServiceInstance chosen = Contenders.pick(this.contenders.nacos, this.contenders.plain);
			assertThat(chosen.getMetadata()).containsEntry("nacos.cluster", "a");
		}
	}

	@Test
	void theChainRoutesByLaneAndZoneWithoutFallbackOrSpillOver() {
		Set<String> plainVersions = new HashSet<>();
		for (int i = 0; i < 2_000; i++) {
			ServiceInstance plain = Contenders.pick(this.contenders.atlasChain, this.contenders.plain);
			assertThat(plain.getMetadata()).containsEntry("zone", "a");
			plainVersions.add(String.valueOf(plain.getMetadata().get("version")));
			ServiceInstance tagged = Contenders.pick(this.contenders.atlasChain, this.contenders.tagged);
			assertThat(tagged.getMetadata()).containsEntry("zone", "a").containsEntry("version", "v2");
		}
		// 10 % of untagged requests go to the canary lane, the others to the baseline.
		assertThat(plainVersions).containsExactlyInAnyOrder("null", "v2");
		assertThat(this.contenders.meters.find("atlas.gray.fallback").counters())
			.allSatisfy((Counter counter) -> assertThat(counter.count()).isZero());
		assertThat(this.contenders.meters.find("atlas.affinity.spillover").counters())
			.allSatisfy((Counter counter) -> assertThat(counter.count()).isZero());
		assertThat(this.contenders.meters.find("atlas.registry.stale").counters())
			.allSatisfy((Counter counter) -> assertThat(counter.count()).isZero());
	}

	@Test
	void theChainWithAnEjectedInstanceNeverPicksIt() {
		ServiceInstance ejected = this.contenders.fleet.get(2);
		Set<ServiceInstance> picked = new HashSet<>();
		for (int i = 0; i < 5_000; i++) {
			picked.add(Contenders.pick(this.contenders.atlasChainEjected, this.contenders.plain));
		}
		assertThat(picked).doesNotContain(ejected).hasSizeGreaterThan(10);
		assertThat(this.contenders.meters.find("atlas.outlier.panic").counters())
			.allSatisfy((Counter counter) -> assertThat(counter.count()).isZero());
	}

	@Test
	void theChainWithLaneRulesSendsBetaRequestsToTheCanary() {
		for (int i = 0; i < 2_000; i++) {
			assertThat(Contenders.pick(this.contenders.atlasChainLaneRules, this.contenders.beta).getMetadata())
				.containsEntry("zone", "a")
				.containsEntry("version", "v2");
		}
	}

}
