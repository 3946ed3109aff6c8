package dev.atlas.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.stats.InstanceStats;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

/**
 * Deterministic discrete-event simulation of one caller spreading requests over five
 * instances, one of which is slow: how much traffic each strategy still sends to the slow
 * instance, and what that does to response times. No network, no threads of its own, a
 * simulated clock (ns), every source of randomness seeded.
 *
 * <p>
 * <strong>The model.</strong>
 * <ul>
 * <li>{@value #INSTANCES} instances of equal weight. Each is a server with
 * {@value #WORKERS} workers and one unbounded FIFO queue: a request waits in the queue
 * until a worker is free, then is served; its response time, as the caller measures it,
 * is queue wait + service time (no network time).</li>
 * <li>Service time: log-normal, median {@value #MEDIAN_SERVICE_MILLIS} ms, σ
 * {@value #SIGMA} (mean 11.3 ms, p99 32 ms) on a normal instance; a slow instance takes
 * {@value #SLOW_FACTOR}× as long (median 100 ms). Each request draws its standard normal
 * variate on arrival (so every contender meets the same sequence of request sizes); the
 * slowness factor is decided when it starts service.</li>
 * <li>One caller; Poisson arrivals at a stated rate: {@value #MAIN_RATE} req/s (each
 * instance gets 200 req/s when spread evenly: 50 % of a normal instance's workers busy by
 * the median, 57 % by the mean; a slow instance serves at most 35 req/s), and
 * {@value #LIGHT_RATE} req/s (light load).</li>
 * <li>{@value #WARMUP_SECONDS} s of warm-up whose requests are not counted, then the
 * measured window. Arrivals stop at its end; every request that arrived in the window is
 * followed to its completion, however long it queues.</li>
 * <li>Scenarios ({@link Scenario}): baseline (no slow instance); A, the fifth instance is
 * slow all the time (60 s); B, it is slow during [20 s, 30 s) and [80 s, 90 s) of a 120 s
 * window (10 s of every 60 s); the baselines last as long as the scenario they are
 * compared with.</li>
 * </ul>
 *
 * <p>
 * <strong>Contenders</strong> ({@link Contender}): Atlas's strategies are driven directly
 * through {@code SnapshotBalancer.choose(snapshot, context)} with a pick context
 * ({@link KeyedPickContext}) backed by an {@link InstanceStats} on the simulated clock
 * (decay time 10 s): a request is {@code started} when it is sent to the instance and
 * {@code completed} with its response time when it finishes. Spring's balancers are
 * driven through {@code choose(request).block()}; they read no statistics. Spring's
 * {@code RandomLoadBalancer} draws from {@code ThreadLocalRandom}, so every run happens
 * on a thread whose {@code ThreadLocalRandom} is seeded
 * ({@link SeededThreadLocalRandom}).
 *
 * <p>
 * This class holds the model's parameters, the scenarios and the results; one run (the
 * queues and the event loop) is a {@link QueueingRun}, and the contenders as a run calls
 * them are built by {@link SimulatedChoosers}.
 *
 * <p>
 * Run {@link #main} for the Markdown; {@link QualitySimulation#main} prints it too.
 * Single-threaded; not thread-safe.
 */
public final class LatencySimulation {

	/** The seed. */
	public static final long SEED = 42L;

	/** Number of instances. */
	public static final int INSTANCES = 5;

	/** Position of the slow instance in the list (the fifth). */
	public static final int SLOW = 4;

	/** Workers per instance. */
	public static final int WORKERS = 4;

	/** Median service time of a normal instance, ms. */
	public static final double MEDIAN_SERVICE_MILLIS = 10;

	/** Standard deviation of the logarithm of the service time. */
	public static final double SIGMA = 0.5;

	/** How many times longer the slow instance serves a request. */
	public static final double SLOW_FACTOR = 10;

	/** The main arrival rate, req/s; the asserted criteria apply to it. */
	public static final double MAIN_RATE = 1000;

	/** The light-load arrival rate, req/s. */
	public static final double LIGHT_RATE = 200;

	/** Warm-up before the measured window, s; its requests are not counted. */
	public static final int WARMUP_SECONDS = 5;

	/** Distinct users of the {@code ring-hash} contenders. */
	public static final int USERS = 10_000;

	/** The header that carries the user key, for {@code ring-hash}. */
	public static final String USER_HEADER = "x-user-id";

	static final long NANOS_PER_SECOND = 1_000_000_000L;

	private LatencySimulation() {
	}

	/**
	 * Prints the simulation's Markdown.
	 * @param args ignored
	 * @throws Exception if a strategy cannot be run at all
	 */
	public static void main(String[] args) throws Exception {
		System.out.println(run(SEED, MAIN_RATE, LIGHT_RATE).markdown());
	}

	/**
	 * Runs every contender in every scenario at each rate.
	 * @param seed the seed of every run
	 * @param rates arrival rates, req/s, positive
	 * @return the results
	 * @throws Exception if a strategy cannot be run at all
	 */
	public static Report run(long seed, double... rates) throws Exception {
		List<Result> results = new ArrayList<>();
		for (double rate : rates) {
			for (Contender contender : Contender.values()) {
				for (Scenario scenario : Scenario.values()) {
					results.add(simulate(contender, scenario, rate, seed));
				}
			}
		}
		return new Report(seed, results);
	}

	/**
	 * Runs one contender in one scenario.
	 * @param contender the strategy
	 * @param scenario the scenario
	 * @param rate arrivals, req/s, positive
	 * @param seed the seed
	 * @return the result
	 * @throws Exception if the strategy cannot be run at all
	 */
	public static Result simulate(Contender contender, Scenario scenario, double rate, long seed) throws Exception {
		// Class initialization may draw from ThreadLocalRandom: get it done on this
		// (unseeded) thread, so that the seeded thread's draws are the run's alone.
		SimulatedChoosers.Chooser warm = SimulatedChoosers.chooser(contender, instances(), new InstanceStats(),
				new SplittableRandom(seed));
		for (int i = 0; i < 10; i++) {
			warm.choose("user-" + i);
		}
		SeededThreadLocalRandom.Outcome<Result> outcome = SeededThreadLocalRandom.call(seed,
				() -> new QueueingRun(contender, scenario, rate, seed).run());
		Result result = outcome.value();
		return new Result(result.contender(), result.scenario(), result.rate(), result.requests(), result.slowShare(),
				result.slowWindowShare(), result.p50Millis(), result.p99Millis(), result.maxMillis(), outcome.seeded());
	}

	/**
	 * The five instances, {@code 10.0.0.1:8080} to {@code 10.0.0.5:8080}, no metadata.
	 */
	static List<ServiceInstance> instances() {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < INSTANCES; i++) {
			instances
				.add(new DefaultServiceInstance("i" + (i + 1), Fixtures.SERVICE_ID, "10.0.0." + (i + 1), 8080, false));
		}
		return instances;
	}

	/** What happens to the slow instance, and for how long the window lasts. */
	public enum Scenario {

		/** No slow instance, 60 s: the baseline of A. */
		BASELINE("baseline (no slow instance), 60 s", 60),

		/** The fifth instance is 10× slower all the time, 60 s. */
		ALWAYS_SLOW("A: one instance of five 10× slower all the time, 60 s", 60),

		/** No slow instance, 120 s: the baseline of B. */
		BASELINE_LONG("baseline (no slow instance), 120 s", 120),

		/**
		 * The fifth instance is 10× slower during [20 s, 30 s) and [80 s, 90 s) of the
		 * 120 s window.
		 */
		PERIODICALLY_SLOW("B: one instance of five 10× slower during 10 s of every 60 s "
				+ "([20 s, 30 s) and [80 s, 90 s) of 120 s)", 120);

		private final String title;

		private final int seconds;

		Scenario(String title, int seconds) {
			this.title = title;
			this.seconds = seconds;
		}

		/**
		 * Description for the report.
		 * @return the title
		 */
		public String title() {
			return this.title;
		}

		/**
		 * Length of the measured window.
		 * @return s
		 */
		public int seconds() {
			return this.seconds;
		}

		/**
		 * The baseline this scenario is compared with.
		 * @return a scenario without a slow instance, as long as this one
		 */
		public Scenario baseline() {
			return (this.seconds == 60) ? BASELINE : BASELINE_LONG;
		}

		/**
		 * Whether this scenario has a slow instance at all.
		 * @return {@code false} for the baselines
		 */
		public boolean hasSlowInstance() {
			return this == ALWAYS_SLOW || this == PERIODICALLY_SLOW;
		}

		/**
		 * Whether the slow instance is slow at a time.
		 * @param nanos simulated time, ns since the start of the warm-up
		 * @return {@code true} when a request starting service now on the slow instance
		 * takes {@value LatencySimulation#SLOW_FACTOR}× as long
		 */
		boolean slowAt(long nanos) {
			return switch (this) {
				case BASELINE, BASELINE_LONG -> false;
				case ALWAYS_SLOW -> true;
				case PERIODICALLY_SLOW -> {
					long measured = nanos - WARMUP_SECONDS * NANOS_PER_SECOND;
					yield measured >= 0 && Math.floorMod(measured, 60 * NANOS_PER_SECOND) >= 20 * NANOS_PER_SECOND
							&& Math.floorMod(measured, 60 * NANOS_PER_SECOND) < 30 * NANOS_PER_SECOND;
				}
			};
		}

	}

	/** The strategies compared. */
	public enum Contender {

		/** Atlas {@code weighted-random}. */
		WEIGHTED_RANDOM("Atlas `weighted-random`"),

		/** Atlas {@code smooth-round-robin}, starting at position 0. */
		SMOOTH_ROUND_ROBIN("Atlas `smooth-round-robin`"),

		/** Atlas {@code least-request}, defaults: choice count 2, bias 1.0. */
		LEAST_REQUEST("Atlas `least-request` (choice count 2, bias 1.0)"),

		/** Atlas {@code peak-ewma}, defaults: choice count 2, decay time 10 s. */
		PEAK_EWMA("Atlas `peak-ewma` (choice count 2, decay 10 s)"),

		/**
		 * Atlas {@code ring-hash} on a random user key per request (of
		 * {@value LatencySimulation#USERS}), 160 points per instance, bounded load off
		 * (the default).
		 */
		RING_HASH("Atlas `ring-hash` (random user key of 10,000, bounded load off)"),

		/**
		 * The same with bounded load, load factor 1.25 (not among the brief's
		 * contenders).
		 */
		RING_HASH_BOUNDED("Atlas `ring-hash`, bounded load 1.25 (extra)"),

		/** Spring Cloud's {@code RoundRobinLoadBalancer}, starting at position 0. */
		SPRING_ROUND_ROBIN("Spring `RoundRobinLoadBalancer`"),

		/** Spring Cloud's {@code RandomLoadBalancer}. */
		SPRING_RANDOM("Spring `RandomLoadBalancer`");

		private final String label;

		Contender(String label) {
			this.label = label;
		}

		/**
		 * Label for the report.
		 * @return the Markdown text
		 */
		public String label() {
			return this.label;
		}

	}

	/**
	 * One contender in one scenario at one rate.
	 *
	 * @param contender the strategy
	 * @param scenario the scenario
	 * @param rate arrivals, req/s
	 * @param requests requests that arrived in the measured window
	 * @param slowShare share of them sent to the fifth instance (the slow one, in the
	 * scenarios that have one), 0..1
	 * @param slowWindowShare the same, among the requests that arrived while that
	 * instance was slow; {@code NaN} when it never was
	 * @param p50Millis median response time (queue wait + service), ms
	 * @param p99Millis 99th percentile of the response time, ms (nearest rank)
	 * @param maxMillis longest response time, ms
	 * @param seeded whether {@code ThreadLocalRandom} could be seeded (it matters for
	 * Spring's random only)
	 */
	public record Result(Contender contender, Scenario scenario, double rate, int requests, double slowShare,
			double slowWindowShare, double p50Millis, double p99Millis, double maxMillis, boolean seeded) {
	}

	/**
	 * The simulation's results.
	 *
	 * @param seed the seed
	 * @param results every run
	 */
	public record Report(long seed, List<Result> results) {

		/**
		 * One run.
		 * @param contender the strategy
		 * @param scenario the scenario
		 * @param rate arrivals, req/s
		 * @return the run
		 * @throws IllegalArgumentException if it was not simulated
		 */
		public Result result(Contender contender, Scenario scenario, double rate) {
			for (Result result : this.results) {
				if (result.contender() == contender && result.scenario() == scenario && result.rate() == rate) {
					return result;
				}
			}
			throw new IllegalArgumentException("not simulated: " + contender + ", " + scenario + ", " + rate);
		}

		/**
		 * A run's p99 against its baseline's (same contender, rate and duration).
		 * @param contender the strategy
		 * @param scenario a scenario with a slow instance
		 * @param rate arrivals, req/s
		 * @return p99 ÷ baseline p99
		 */
		public double p99Ratio(Contender contender, Scenario scenario, double rate) {
			return result(contender, scenario, rate).p99Millis()
					/ result(contender, scenario.baseline(), rate).p99Millis();
		}

		/**
		 * The results as Markdown tables, one per scenario and rate.
		 * @return the Markdown text
		 */
		public String markdown() {
			StringBuilder out = new StringBuilder();
			out.append(String.format(Locale.ROOT,
					"Slow-instance model (`LatencySimulation`): one caller, Poisson arrivals; %d instances of equal "
							+ "weight, each %d workers and an unbounded FIFO queue (response time = queue wait + "
							+ "service time); service time log-normal, median %.0f ms, σ %.1f; the slow instance "
							+ "(the fifth) takes %.0f× as long; %d s of warm-up not counted; every request that "
							+ "arrives in the measured window is followed to completion; seed %d. Percentiles are "
							+ "nearest-rank over all measured requests; the baseline is the same contender, rate "
							+ "and duration without a slow instance.%n%n",
					INSTANCES, WORKERS, MEDIAN_SERVICE_MILLIS, SIGMA, SLOW_FACTOR, WARMUP_SECONDS, this.seed));
			List<Double> rates = this.results.stream()
				.map(Result::rate)
				.distinct()
				.sorted((a, b) -> -a.compareTo(b))
				.toList();
			for (double rate : rates) {
				for (Scenario scenario : List.of(Scenario.ALWAYS_SLOW, Scenario.PERIODICALLY_SLOW)) {
					out.append(String.format(Locale.ROOT, "#### Slow instance, %s, %,.0f req/s (seed %d)%n%n",
							scenario.title(), rate, this.seed));
					boolean periodic = scenario == Scenario.PERIODICALLY_SLOW;
					out.append("| strategy | to the slow instance")
						.append(periodic ? ", whole window | to it while slow" : "")
						.append(" | p50 | p99 | baseline p50 | baseline p99 | p99 ÷ baseline p99 |\n|---|---:|")
						.append(periodic ? "---:|" : "")
						.append("---:|---:|---:|---:|---:|\n");
					for (Contender contender : Contender.values()) {
						Result result = find(contender, scenario, rate);
						Result baseline = find(contender, scenario.baseline(), rate);
						if (result == null || baseline == null) {
							continue;
						}
						out.append("| ").append(contender.label()).append(result.seeded() ? "" : " (unseeded)");
						out.append(" | ").append(percent(result.slowShare()));
						if (periodic) {
							out.append(" | ").append(percent(result.slowWindowShare()));
						}
						out.append(String.format(Locale.ROOT, " | %s | %s | %s | %s | %s× |%n",
								millis(result.p50Millis()), millis(result.p99Millis()), millis(baseline.p50Millis()),
								millis(baseline.p99Millis()),
								MarkdownReport.ratio(result.p99Millis() / baseline.p99Millis())));
					}
					out.append('\n');
				}
			}
			return out.toString();
		}

		private @Nullable Result find(Contender contender, Scenario scenario, double rate) {
			for (Result result : this.results) {
				if (result.contender() == contender && result.scenario() == scenario && result.rate() == rate) {
					return result;
				}
			}
			return null;
		}

		private static String percent(double share) {
			return Double.isNaN(share) ? "—" : String.format(Locale.ROOT, "%.2f %%", share * 100);
		}

		private static String millis(double millis) {
			return (millis >= 1000) ? String.format(Locale.ROOT, "%,.0f ms", millis)
					: String.format(Locale.ROOT, "%.1f ms", millis);
		}

	}

}
