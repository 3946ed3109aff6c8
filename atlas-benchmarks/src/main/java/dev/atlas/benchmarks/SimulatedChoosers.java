package dev.atlas.benchmarks;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import dev.atlas.benchmarks.Fixtures.FixedListSupplier;
import dev.atlas.benchmarks.Fixtures.Just;
import dev.atlas.benchmarks.LatencySimulation.Contender;
import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.SnapshotBalancer;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;

/**
 * The contenders of {@link LatencySimulation} as the simulation calls them: each
 * {@link Contender} built over the five simulated instances, answering an index in
 * {@link LatencySimulation#instances()} order. Atlas's strategies are called directly on
 * one snapshot with a {@link KeyedPickContext} over the run's {@link InstanceStats} (on
 * the simulated clock); Spring's load balancers through their Reactor API. Not
 * thread-safe: one run at a time.
 */
final class SimulatedChoosers {

	private SimulatedChoosers() {
	}

	static Chooser chooser(Contender contender, List<ServiceInstance> instances, InstanceStats stats,
			SplittableRandom random) {
		MeterRegistry meters = new SimpleMeterRegistry();
		InstanceAttributesParser parser = new InstanceAttributesParser(Fixtures.SERVICE_ID, "version", meters);
		StrategySettings settings = new StrategySettings(Fixtures.SERVICE_ID, parser, AllZeroWeightsPolicy.FAIL_OPEN,
				meters);
		return switch (contender) {
			case WEIGHTED_RANDOM -> atlas(new WeightedRandomBalancer(settings, () -> random), instances, parser, stats);
			case SMOOTH_ROUND_ROBIN ->
				atlas(new SmoothWeightedRoundRobinBalancer(settings, 0L), instances, parser, stats);
			case LEAST_REQUEST -> atlas(new LeastRequestBalancer(settings, LeastRequestRules.DEFAULTS, () -> random),
					instances, parser, stats);
			case PEAK_EWMA -> atlas(new PeakEwmaBalancer(settings, PeakEwmaRules.DEFAULTS.choiceCount(), () -> random),
					instances, parser, stats);
			case RING_HASH -> atlas(
					new RingHashBalancer(
							settings, new HashRules(LatencySimulation.USER_HEADER, null,
									HashRules.DEFAULT_VIRTUAL_NODES, false, HashRules.DEFAULT_LOAD_FACTOR),
							() -> random),
					instances, parser, stats);
			case RING_HASH_BOUNDED -> atlas(
					new RingHashBalancer(
							settings, new HashRules(LatencySimulation.USER_HEADER, null,
									HashRules.DEFAULT_VIRTUAL_NODES, true, HashRules.DEFAULT_LOAD_FACTOR),
							() -> random),
					instances, parser, stats);
			case SPRING_ROUND_ROBIN ->
				spring(new RoundRobinLoadBalancer(new Just<>(new FixedListSupplier(instances)), Fixtures.SERVICE_ID, 0),
						instances);
			case SPRING_RANDOM ->
				spring(new RandomLoadBalancer(new Just<>(new FixedListSupplier(instances)), Fixtures.SERVICE_ID),
						instances);
		};
	}

	private static Chooser atlas(SnapshotBalancer<?> balancer, List<ServiceInstance> instances,
			InstanceAttributesParser parser, InstanceStats stats) {
		InstanceSnapshot snapshot = InstanceSnapshot.of(instances, parser);
		int[] indexes = indexes(snapshot, instances);
		KeyedPickContext context = new KeyedPickContext(LatencySimulation.USER_HEADER, snapshot, stats);
		return (userKey) -> {
			context.key = userKey;
			int position = balancer.choose(snapshot, context);
			if (position < 0) {
				throw new IllegalStateException(balancer.name() + " chose no instance");
			}
			return indexes[position];
		};
	}

	private static Chooser spring(ReactorServiceInstanceLoadBalancer loadBalancer, List<ServiceInstance> instances) {
		Request<?> request = Fixtures.request(null);
		Map<ServiceInstance, Integer> indexes = new IdentityHashMap<>();
		for (int i = 0; i < instances.size(); i++) {
			indexes.put(instances.get(i), i);
		}
		return (userKey) -> {
			ServiceInstance chosen = Contenders.pick(loadBalancer, request);
			Integer index = (chosen != null) ? indexes.get(chosen) : null;
			if (index == null) {
				throw new IllegalStateException(loadBalancer + " chose no instance of the list");
			}
			return index;
		};
	}

	/** Snapshot position → index in the list (the very instance objects). */
	private static int[] indexes(List<ServiceInstance> snapshot, List<ServiceInstance> instances) {
		int[] indexes = new int[snapshot.size()];
		for (int position = 0; position < indexes.length; position++) {
			indexes[position] = -1;
			for (int i = 0; i < instances.size(); i++) {
				if (instances.get(i) == snapshot.get(position)) {
					indexes[position] = i;
				}
			}
		}
		return indexes;
	}

	/** A strategy under test, as the simulation calls it. */
	interface Chooser {

		/**
		 * Chooses an instance.
		 * @param userKey the request's user key (read by {@code ring-hash} only)
		 * @return its index in {@link LatencySimulation#instances()} order
		 */
		int choose(String userKey);

	}

}
