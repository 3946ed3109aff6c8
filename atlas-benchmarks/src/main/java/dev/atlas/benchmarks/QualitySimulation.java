package dev.atlas.benchmarks;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import dev.atlas.benchmarks.Fixtures.FixedListSupplier;
import dev.atlas.benchmarks.Fixtures.Just;
import dev.atlas.loadbalancer.choice.Balancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.weighting.SlowStart;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.WeightedServiceInstanceListSupplier;

/**
 * Deterministic quality simulation, no network: how closely each weighted strategy's
 * observed shares follow the configured weights over a fixed number of picks, and the
 * shape of Atlas's slow-start ramp.
 *
 * <p>
 * Every source of randomness is seeded: Atlas's weighted random gets a
 * {@link SplittableRandom}; Spring's round robin starts at position 0; Nacos, which draws
 * from {@code ThreadLocalRandom}, runs on a thread whose {@code ThreadLocalRandom} is
 * seeded ({@link SeededThreadLocalRandom}). Run {@link #main} for the Markdown, which
 * also holds the load-aware strategies' simulations ({@link LatencySimulation},
 * {@link HashingSimulation}).
 */
public final class QualitySimulation {

	/** Picks per strategy and scenario. */
	public static final int PICKS = 10_000;

	/** The seed. */
	public static final long SEED = 42L;

	/** Size of the slow-start probe: warm peers next to the one new instance. */
	static final int WARM_PEERS = 4;

	/** Points of the ramp, in percent of the warmup window. */
	static final int[] RAMP_PERCENTS = { 0, 10, 25, 50, 75, 100 };

	private QualitySimulation() {
	}

	/**
	 * Prints the simulation's Markdown, then that of the load-aware strategies
	 * ({@link LatencySimulation} at 1,000 and 200 req/s, {@link HashingSimulation}):
	 * about 15 s in all.
	 * @param args ignored
	 * @throws Exception if a strategy cannot be run at all
	 */
	public static void main(String[] args) throws Exception {
		System.out.println(run(PICKS, SEED).markdown());
		System.out.println(
				LatencySimulation.run(LatencySimulation.SEED, LatencySimulation.MAIN_RATE, LatencySimulation.LIGHT_RATE)
					.markdown());
		System.out.print(HashingSimulation.run(HashingSimulation.SEED).markdown());
	}

	/**
	 * Runs the simulation.
	 * @param picks picks per strategy and scenario
	 * @param seed the seed
	 * @return the results
	 * @throws Exception if a strategy cannot be run at all
	 */
	public static Report run(int picks, long seed) throws Exception {
		List<Scenario> scenarios = List.of(scenario("weights 1:2:3:4:5", new double[] { 1, 2, 3, 4, 5 }, picks, seed),
				scenario("weights 0:1:1 (first instance drained)", new double[] { 0, 1, 1 }, picks, seed));
		return new Report(picks, seed, scenarios, ramp(picks, seed));
	}

	private static Scenario scenario(String title, double[] weights, int picks, long seed) throws Exception {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < weights.length; i++) {
			instances.add(Fixtures.nacosInstance(i, weights[i], "DEFAULT",
					Map.of("weight", Long.toString(Math.round(weights[i])))));
		}
		List<Line> lines = new ArrayList<>();
		lines.add(line("Atlas weighted-random", true, instances, weights, picks, seed, (list, s) -> {
			SplittableRandom random = new SplittableRandom(s);
			MeterRegistry meters = new SimpleMeterRegistry();
			InstanceAttributesParser parser = parser(meters);
			return reactor(atlas(list,
					new WeightedRandomBalancer(
							new StrategySettings(Fixtures.SERVICE_ID, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters),
							() -> random),
					parser));
		}));
		lines.add(line("Atlas smooth-round-robin", true, instances, weights, picks, seed, (list, s) -> {
			MeterRegistry meters = new SimpleMeterRegistry();
			InstanceAttributesParser parser = parser(meters);
			return reactor(atlas(list,
					new SmoothWeightedRoundRobinBalancer(
							new StrategySettings(Fixtures.SERVICE_ID, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters),
							0L),
					parser));
		}));
		lines.add(line("Spring `WeightedServiceInstanceListSupplier` + round robin", true, instances, weights, picks,
				seed,
				(list, s) -> reactor(new RoundRobinLoadBalancer(
						new Just<>(new WeightedServiceInstanceListSupplier(new FixedListSupplier(list))),
						Fixtures.SERVICE_ID, 0))));
		lines.add(line("SCA `NacosLoadBalancer`", true, instances, weights, picks, seed,
				(list, s) -> reactor(Fixtures.nacosLoadBalancer(supplier(list), "DEFAULT"))));
		lines.add(line("Spring `RoundRobinLoadBalancer` (reference: ignores weights)", false, instances, weights, picks,
				seed, (list, s) -> reactor(new RoundRobinLoadBalancer(supplier(list), Fixtures.SERVICE_ID, 0))));
		return new Scenario(title, weights, lines);
	}

	private static Line line(String strategy, boolean weighted, List<ServiceInstance> instances, double[] weights,
			int picks, long seed, PickerFactory factory) throws Exception {
		try {
			// Class initialization may draw from ThreadLocalRandom; get it done on this
			// (unseeded) thread so that
			// the seeded thread's draws are the picks' alone, whatever ran before in this
			// JVM.
			Picker warmup = factory.create(instances, seed);
			for (int p = 0; p < 100; p++) {
				warmup.pick();
			}
		}
		catch (RuntimeException ex) {
			// reported by the seeded run below
		}
		SeededThreadLocalRandom.Outcome<Object> outcome = SeededThreadLocalRandom.call(seed, () -> {
			try {
				Picker picker = factory.create(instances, seed);
				Map<ServiceInstance, Integer> counts = new IdentityHashMap<>();
				for (int p = 0; p < picks; p++) {
					ServiceInstance chosen = picker.pick();
					counts.merge(chosen, 1, Integer::sum);
				}
				return counts;
			}
			catch (RuntimeException ex) {
				return ex.getClass().getSimpleName() + ": " + ex.getMessage();
			}
		});
		if (outcome.value() instanceof String error) {
			return new Line(strategy, weighted, List.of(), outcome.seeded(), error);
		}
		@SuppressWarnings("unchecked")
		Map<ServiceInstance, Integer> counts = (Map<ServiceInstance, Integer>) outcome.value();
		double total = 0;
		for (double weight : weights) {
			total += weight;
		}
		List<Share> shares = new ArrayList<>();
		for (int i = 0; i < instances.size(); i++) {
			shares.add(new Share(weights[i], weights[i] / total,
					counts.getOrDefault(instances.get(i), 0) / (double) picks));
		}
		int unknown = picks - counts.entrySet()
			.stream()
			.filter((entry) -> instances.stream().anyMatch((instance) -> instance == entry.getKey()))
			.mapToInt(Map.Entry::getValue)
			.sum();
		return new Line(strategy, weighted, shares, outcome.seeded(),
				(unknown == 0) ? null : unknown + " picks returned no instance of the list");
	}

	private static List<RampPoint> ramp(int picks, long seed) {
		long start = 1_700_000_000_000L;
		MutableClock clock = new MutableClock(start);
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < WARM_PEERS; i++) {
			instances.add(Fixtures.nacosInstance(i, 1, "DEFAULT", Map.of()));
		}
		ServiceInstance fresh = Fixtures.nacosInstance(WARM_PEERS, 1, "DEFAULT",
				Map.of("atlas.registered-at", Long.toString(start)));
		instances.add(fresh);
		MeterRegistry meters = new SimpleMeterRegistry();
		SnapshotCache snapshots = new SnapshotCache(parser(meters));
		SlowStart slowStart = new SlowStart(WarmupRules.DEFAULTS, clock);
		SplittableRandom random = new SplittableRandom(seed);
		WeightedRandomBalancer balancer = new WeightedRandomBalancer(
				new StrategySettings(Fixtures.SERVICE_ID, parser(meters), AllZeroWeightsPolicy.FAIL_OPEN, meters),
				() -> random);
		WarmupRules aggressive = new WarmupRules(WarmupRules.DEFAULTS.duration(), 2.0,
				WarmupRules.DEFAULTS.minWeightPercent());
		long window = WarmupRules.DEFAULTS.duration().toMillis();
		List<RampPoint> points = new ArrayList<>();
		for (int percent : RAMP_PERCENTS) {
			long age = window * percent / 100;
			clock.set(start + age);
			InstanceSnapshot candidates = slowStart.apply(snapshots.snapshotOf(instances));
			int hits = 0;
			for (int p = 0; p < picks; p++) {
				if (balancer.choose(candidates) == fresh) {
					hits++;
				}
			}
			double factor = WarmupRules.DEFAULTS.factor(age);
			points.add(new RampPoint(percent, age, factor, aggressive.factor(age), factor / (WARM_PEERS + factor),
					hits / (double) picks));
		}
		return points;
	}

	private static InstanceAttributesParser parser(MeterRegistry meters) {
		return new InstanceAttributesParser(Fixtures.SERVICE_ID, "version", meters);
	}

	/**
	 * Atlas's load balancer over a fixed list, with no stage and no live statistics.
	 */
	private static AtlasLoadBalancer atlas(List<ServiceInstance> instances, Balancer balancer,
			InstanceAttributesParser parser) {
		return new AtlasLoadBalancer(Fixtures.SERVICE_ID, supplier(instances),
				new ServicePipeline(
						new Pipeline(new SnapshotCache(parser), List.of(), List.of(), balancer.name(), balancer)),
				LiveStats.NONE);
	}

	private static Just<ServiceInstanceListSupplier> supplier(List<ServiceInstance> instances) {
		return new Just<>(new FixedListSupplier(instances));
	}

	private static Picker reactor(ReactorServiceInstanceLoadBalancer loadBalancer) {
		Request<?> request = Fixtures.request(null);
		return () -> Contenders.pick(loadBalancer, request);
	}

	/**
	 * One instance's share.
	 *
	 * @param weight configured weight
	 * @param expected weight ÷ Σweight
	 * @param observed picks ÷ all picks
	 */
	public record Share(double weight, double expected, double observed) {

		/**
		 * The deviation in percentage points.
		 * @return |observed − expected| × 100
		 */
		public double deviationPoints() {
			return Math.abs(this.observed - this.expected) * 100;
		}

	}

	/**
	 * One strategy in one scenario.
	 *
	 * @param strategy label
	 * @param weighted whether the strategy claims to honour weights (the ±2 points
	 * assertion applies)
	 * @param shares one per instance, in list order; empty when {@code error} is set
	 * @param seeded whether every source of randomness was seeded
	 * @param error what went wrong, or {@code null}
	 */
	public record Line(String strategy, boolean weighted, List<Share> shares, boolean seeded, @Nullable String error) {

		/**
		 * The largest deviation.
		 * @return points; {@code NaN} on error
		 */
		public double maxDeviationPoints() {
			return this.shares.stream().mapToDouble(Share::deviationPoints).max().orElse(Double.NaN);
		}

	}

	/**
	 * One set of weights and every strategy's result.
	 *
	 * @param title description
	 * @param weights configured weights
	 * @param lines results
	 */
	public record Scenario(String title, double[] weights, List<Line> lines) {
	}

	/**
	 * One point of the slow-start ramp.
	 *
	 * @param percent age in percent of the window
	 * @param ageMillis age
	 * @param factor weight factor with the defaults (aggression 1.0, floor 10 %)
	 * @param factorAggression2 weight factor with aggression 2.0
	 * @param expectedShare the new instance's expected share next to {@value #WARM_PEERS}
	 * warm peers of equal weight
	 * @param observedShare its observed share through {@code SlowStart} + weighted random
	 */
	public record RampPoint(int percent, long ageMillis, double factor, double factorAggression2, double expectedShare,
			double observedShare) {
	}

	/**
	 * The simulation's results.
	 *
	 * @param picks picks per strategy
	 * @param seed the seed
	 * @param scenarios share scenarios
	 * @param ramp slow-start points
	 */
	public record Report(int picks, long seed, List<Scenario> scenarios, List<RampPoint> ramp) {

		/**
		 * The results as Markdown tables.
		 * @return the Markdown text
		 */
		public String markdown() {
			StringBuilder out = new StringBuilder();
			for (Scenario scenario : this.scenarios) {
				out.append(String.format(Locale.ROOT,
						"#### Observed share vs configured weight: %s (%,d picks, seed %d)%n%n", scenario.title(),
						this.picks, this.seed));
				out.append("| strategy |");
				for (int i = 0; i < scenario.weights().length; i++) {
					out.append(String.format(Locale.ROOT, " i%d (w %s) |", i + 1, weight(scenario.weights()[i])));
				}
				out.append(" max deviation |\n|---|")
					.append("---:|".repeat(scenario.weights().length))
					.append("---:|\n");
				double total = 0;
				for (double weight : scenario.weights()) {
					total += weight;
				}
				out.append("| *configured* |");
				for (double weight : scenario.weights()) {
					out.append(' ').append(percent(weight / total)).append(" |");
				}
				out.append(" |\n");
				for (Line line : scenario.lines()) {
					out.append("| ").append(line.strategy()).append(line.seeded() ? "" : " (unseeded)").append(" |");
					if (line.error() != null) {
						out.append(" error: ")
							.append(line.error())
							.append(" |".repeat(scenario.weights().length))
							.append('\n');
						continue;
					}
					for (Share share : line.shares()) {
						out.append(' ').append(percent(share.observed())).append(" |");
					}
					out.append(String.format(Locale.ROOT, " %.2f pt |%n", line.maxDeviationPoints()));
				}
				out.append('\n');
			}
			out.append(String.format(Locale.ROOT,
					"#### Slow-start ramp: one new instance next to %d warm peers of equal "
							+ "weight (window 60 s, floor 10 %%; %,d weighted-random picks per point)%n%n",
					WARM_PEERS, this.picks));
			out.append("| age (% of window) | factor, aggression 1.0 (default) | factor, aggression 2.0 | "
					+ "expected share | observed share |\n|---:|---:|---:|---:|---:|\n");
			for (RampPoint point : this.ramp) {
				out.append(String.format(Locale.ROOT, "| %d %% (%.0f s) | %.2f | %.2f | %s | %s |%n", point.percent(),
						point.ageMillis() / 1000.0, point.factor(), point.factorAggression2(),
						percent(point.expectedShare()), percent(point.observedShare())));
			}
			return out.toString();
		}

		private static String percent(double share) {
			return String.format(Locale.ROOT, "%.2f %%", share * 100);
		}

		private static String weight(double weight) {
			return (weight == Math.rint(weight)) ? Long.toString((long) weight) : Double.toString(weight);
		}

	}

	private interface Picker {

		@Nullable ServiceInstance pick();

	}

	private interface PickerFactory {

		Picker create(List<ServiceInstance> instances, long seed);

	}

	/** A clock the ramp moves by hand. */
	static final class MutableClock extends Clock {

		private volatile long millis;

		MutableClock(long millis) {
			this.millis = millis;
		}

		void set(long millis) {
			this.millis = millis;
		}

		@Override
		public long millis() {
			return this.millis;
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(this.millis);
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

	}

}
