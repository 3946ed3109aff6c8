package dev.atlas.benchmarks;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.ZoneShares;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

/**
 * Deterministic simulation of zone-aware routing, no network: callers and providers
 * spread over two zones, every caller with the same demand, each request sent to one
 * provider. Compares Atlas's threshold affinity (all of a caller's requests stay in its
 * zone while the zone has usable providers; {@link ClusterAffinity}) with proportional
 * routing ({@link ZoneShares}: as much stays local as keeps every provider equally
 * loaded, the rest goes where capacity is spare, and a zone that loses providers sheds
 * its traffic gradually). Within the zone chosen, a provider is drawn at random among the
 * healthy ones (Atlas's default {@code weighted-random} over equal weights). Every draw
 * is seeded.
 *
 * <p>
 * Measured: each provider's share of the load against the mean (max / mean), the share of
 * requests that crossed a zone, and the local share of one zone's callers.
 */
public final class ZoneSimulation {

	/** Requests per scenario. */
	public static final int REQUESTS = 600_000;

	private static final String SERVICE = "provider";

	private ZoneSimulation() {
	}

	/**
	 * Runs one scenario.
	 * @param mode how the callers route
	 * @param callersA callers in zone {@code a}
	 * @param callersB callers in zone {@code b}
	 * @param providersA providers in zone {@code a}
	 * @param providersB providers in zone {@code b}
	 * @param healthyA how many of zone {@code a}'s providers are healthy (the first
	 * ones); the others are ejected: they get no request
	 * @param seed the seed of every draw
	 * @return the measurements
	 */
	public static Result run(Mode mode, int callersA, int callersB, int providersA, int providersB, int healthyA,
			long seed) {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < providersA + providersB; i++) {
			String zone = (i < providersA) ? "a" : "b";
			DefaultServiceInstance instance = new DefaultServiceInstance(SERVICE + "-" + i, SERVICE, "10.0.0." + i,
					8080, false);
			instance.getMetadata().put("zone", zone);
			instances.add(instance);
		}
		InstanceSnapshot all = InstanceSnapshot.of(instances, new InstanceAttributesParser(SERVICE, "version", meters));
		boolean[] healthy = healthy(providersA, providersB, healthyA);
		InstanceSnapshot usable = all.filter((i) -> healthy[i]);
		// ejected providers never reach the affinity filter (it runs after outlier
		// ejection): it is given the usable ones
		Clock clock = Clock.fixed(Instant.EPOCH, ZoneOffset.UTC);
		ClusterAffinity inA = new ClusterAffinity(SERVICE, AffinityRules.of("a"), meters, clock);
		ClusterAffinity inB = new ClusterAffinity(SERVICE, AffinityRules.of("b"), meters, clock);
		List<ZoneShares.Zone> zones = List.of(new ZoneShares.Zone("a", callersA, providersA, healthyA, providersA),
				new ZoneShares.Zone("b", callersB, providersB, providersB, providersB));
		ZoneShares sharesA = ZoneShares.compute("a", zones, ZoneShares.DEFAULT_MIN_CLUSTER_SIZE);
		ZoneShares sharesB = ZoneShares.compute("b", zones, ZoneShares.DEFAULT_MIN_CLUSTER_SIZE);
		InstanceSnapshot[] byZone = { usable.filter((i) -> "a".equals(usable.attributes(i).cluster())),
				usable.filter((i) -> "b".equals(usable.attributes(i).cluster())) };
		SplittableRandom random = new SplittableRandom(seed);
		long[] load = new long[all.size()];
		long crossed = 0;
		long fromA = 0;
		long stayedA = 0;
		int callers = callersA + callersB;
		for (int r = 0; r < REQUESTS; r++) {
			boolean callerInA = random.nextInt(callers) < callersA;
			InstanceSnapshot candidates;
			if (mode == Mode.THRESHOLD) {
				candidates = (callerInA ? inA : inB).apply(usable);
			}
			else {
				ZoneShares shares = callerInA ? sharesA : sharesB;
				int zone = shares.zoneFor(random.nextDouble());
				candidates = (zone < 0) ? usable : byZone[zone];
			}
			ServiceInstance chosen = candidates.get(random.nextInt(candidates.size()));
			int index = all.indexOf(chosen);
			load[index]++;
			boolean providerInA = index < providersA;
			if (callerInA != providerInA) {
				crossed++;
			}
			if (callerInA) {
				fromA++;
				if (providerInA) {
					stayedA++;
				}
			}
		}
		return new Result(load, crossed / (double) REQUESTS, (fromA > 0) ? stayedA / (double) fromA : 0);
	}

	/**
	 * Which providers are healthy: the first {@code healthyA} of zone {@code a}, every
	 * one of zone {@code b}.
	 * @param providersA providers in zone {@code a}
	 * @param providersB providers in zone {@code b}
	 * @param healthyA healthy providers in zone {@code a}
	 * @return one flag per provider, zone {@code a}'s first
	 */
	public static boolean[] healthy(int providersA, int providersB, int healthyA) {
		boolean[] healthy = new boolean[providersA + providersB];
		for (int i = 0; i < healthy.length; i++) {
			healthy[i] = i >= providersA || i < healthyA;
		}
		return healthy;
	}

	/**
	 * Prints the report as Markdown.
	 * @param args ignored
	 */
	public static void main(String[] args) {
		System.out.print(report(42L));
	}

	static String report(long seed) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "Zone simulation (seed %d, %,d requests per row)%n%n", seed, REQUESTS));
		out.append("| callers a/b | providers a/b | mode | max/mean load | cross-zone |\n|---|---|---|---|---|\n");
		for (int[] shape : new int[][] { { 6, 6, 2, 10 }, { 6, 6, 6, 6 } }) {
			for (Mode mode : Mode.values()) {
				Result result = run(mode, shape[0], shape[1], shape[2], shape[3], shape[2], seed);
				out.append(String.format(Locale.ROOT, "| %d/%d | %d/%d | %s | %.2f | %.1f %% |%n", shape[0], shape[1],
						shape[2], shape[3], mode.name().toLowerCase(Locale.ROOT),
						result.maxOverMean(healthy(shape[2], shape[3], shape[2])), 100 * result.crossZone()));
			}
		}
		out.append("\nCallers 6/6, providers 10/10, zone a's providers failing one by one: the local share of zone"
				+ " a's callers, and a surviving provider's load against its load with all healthy\n\n");
		out.append("| healthy in a | threshold: local share | proportional: local share | min(1, 1.4 h) |"
				+ " proportional: survivor load |\n|---|---|---|---|---|\n");
		double normal = meanLoadA(run(Mode.PROPORTIONAL, 6, 6, 10, 10, 10, seed), 10);
		for (int healthyA = 10; healthyA >= 0; healthyA--) {
			Result threshold = run(Mode.THRESHOLD, 6, 6, 10, 10, healthyA, seed);
			Result proportional = run(Mode.PROPORTIONAL, 6, 6, 10, 10, healthyA, seed);
			out.append(String.format(Locale.ROOT, "| %d %% | %.1f %% | %.1f %% | %.0f %% | %s |%n", 10 * healthyA,
					100 * threshold.localShareA(), 100 * proportional.localShareA(),
					100 * Math.min(1, 1.4 * healthyA / 10), (healthyA > 0)
							? String.format(Locale.ROOT, "%.2f×", maxLoadA(proportional, healthyA) / normal) : "–"));
		}
		return out.toString();
	}

	/**
	 * The mean load of zone {@code a}'s healthy providers.
	 * @param result a run's result
	 * @param healthyA healthy providers in zone {@code a} (the first ones)
	 * @return requests per provider
	 */
	public static double meanLoadA(Result result, int healthyA) {
		long sum = 0;
		for (int i = 0; i < healthyA; i++) {
			sum += result.load()[i];
		}
		return sum / (double) healthyA;
	}

	/**
	 * The most loaded healthy provider of zone {@code a}.
	 * @param result a run's result
	 * @param healthyA healthy providers in zone {@code a} (the first ones)
	 * @return its load, requests
	 */
	public static double maxLoadA(Result result, int healthyA) {
		long max = 0;
		for (int i = 0; i < healthyA; i++) {
			max = Math.max(max, result.load()[i]);
		}
		return max;
	}

	/**
	 * How the callers route.
	 */
	public enum Mode {

		/** Atlas's threshold affinity, with its defaults. */
		THRESHOLD,

		/** Proportional zone-aware routing with gradual failover. */
		PROPORTIONAL

	}

	/**
	 * What one scenario measured.
	 *
	 * @param load requests each provider received, zone {@code a}'s first
	 * @param crossZone the share of requests that left their caller's zone, 0..1
	 * @param localShareA the share of zone {@code a}'s callers' requests that stayed in
	 * zone {@code a}, 0..1
	 */
	public record Result(long[] load, double crossZone, double localShareA) {

		/**
		 * The most loaded healthy provider's load over the mean of the healthy ones.
		 * @param healthy which providers are healthy, in the order of {@link #load()}
		 * @return a ratio {@code >= 1}
		 */
		public double maxOverMean(boolean[] healthy) {
			long max = 0;
			long sum = 0;
			int count = 0;
			for (int i = 0; i < this.load.length; i++) {
				if (healthy[i]) {
					max = Math.max(max, this.load[i]);
					sum += this.load[i];
					count++;
				}
			}
			return max / (sum / (double) count);
		}

	}

}
