package dev.atlas.benchmarks;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.SnapshotBalancer;
import dev.atlas.loadbalancer.choice.WeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.orca.LoadReport;
import dev.atlas.loadbalancer.orca.ReportedLoad;
import dev.atlas.loadbalancer.orca.WeightRules;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Deterministic discrete-event simulation of a fleet of mixed capacity: five instances,
 * the last two with half the capacity of the others (each request takes them twice as
 * long), and one caller sending Poisson arrivals at {@value #LOAD} of the fleet's total
 * capacity. For each contender: each instance's share of the requests, its utilization
 * (the fraction of its workers' time busy), and the response times. What it shows: the
 * strategies that do not know capacities (round robin) overload the small instances; the
 * load-aware ones (least-request, peak-EWMA) see only this caller's in-flight requests
 * and response times; {@code weighted-round-robin} gets the instances' own reports (ORCA:
 * requests per second and utilization over the last {@value #REPORT_WINDOW_SECONDS} s, on
 * every answer) and spreads the load in proportion to capacity.
 *
 * <p>
 * <strong>The model.</strong> Each instance: {@value #WORKERS} workers and a FIFO queue;
 * service time log-normal, median {@value #MEDIAN_SERVICE_MILLIS} ms, σ {@value #SIGMA}
 * (mean 11.3 ms), twice that on a half-capacity instance; a request's size is drawn on
 * arrival, so every contender meets the same sequence. Capacity of a full instance:
 * {@value #WORKERS} ÷ 11.3 ms ≈ 353 req/s; of the fleet 1,412 req/s; arrivals 988 req/s.
 * {@value #WARMUP_SECONDS} s of warm-up (longer than the 10 s blackout of
 * {@code weighted-round-robin}), then {@value #MEASURED_SECONDS} s measured. The
 * strategies run on the simulated clock; the reported weights are recomputed every
 * simulated second (gRFC A58's defaults). Seeded; single-threaded.
 */
public final class CapacitySimulation {

	/** The seed. */
	public static final long SEED = 42L;

	/** Instances in the fleet. */
	public static final int INSTANCES = 5;

	/** Workers per instance. */
	public static final int WORKERS = 4;

	/** Median service time on a full-capacity instance, ms. */
	public static final double MEDIAN_SERVICE_MILLIS = 10;

	/** Standard deviation of the logarithm of the service time. */
	public static final double SIGMA = 0.5;

	/** Arrivals as a share of the fleet's capacity. */
	public static final double LOAD = 0.7;

	/** Warm-up, s. */
	public static final int WARMUP_SECONDS = 20;

	/** Measured window, s. */
	public static final int MEASURED_SECONDS = 60;

	/** The providers' window for the rates and utilization they report, s. */
	public static final int REPORT_WINDOW_SECONDS = 5;

	private static final long NANOS = 1_000_000_000L;

	private CapacitySimulation() {
	}

	/** The strategies compared. */
	public enum Contender {

		/** Reported load, gRFC A58. */
		WEIGHTED_ROUND_ROBIN("weighted-round-robin"),

		/** Round robin (equal registry weights). */
		SMOOTH_ROUND_ROBIN("smooth-round-robin"),

		/** P2C by in-flight requests. */
		LEAST_REQUEST("least-request"),

		/** P2C by peak-EWMA response time × in-flight requests. */
		PEAK_EWMA("peak-ewma");

		private final String label;

		Contender(String label) {
			this.label = label;
		}

		/**
		 * The strategy's name.
		 * @return e.g. {@code weighted-round-robin}
		 */
		public String label() {
			return this.label;
		}

	}

	/**
	 * Prints the Markdown of every contender.
	 * @param args ignored
	 */
	public static void main(String[] args) {
		List<Result> results = new ArrayList<>();
		for (Contender contender : Contender.values()) {
			results.add(run(contender, SEED));
		}
		System.out.println(markdown(results));
	}

	/**
	 * Whether an instance has half the capacity.
	 * @param instance its index
	 * @return {@code true} for the last two
	 */
	public static boolean halfCapacity(int instance) {
		return instance >= INSTANCES - 2;
	}

	/**
	 * Runs one contender.
	 * @param contender the strategy
	 * @param seed the seed
	 * @return what it measured
	 */
	public static Result run(Contender contender, long seed) {
		return new Run(contender, seed).run();
	}

	/**
	 * The results as a Markdown table.
	 * @param results one per contender
	 * @return the table
	 */
	public static String markdown(List<Result> results) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"Five instances, the last two (4, 5) with half the capacity; arrivals at %.0f %% of the fleet's "
						+ "capacity (988 req/s), %d s measured after %d s of warm-up, seed %d.%n%n",
				LOAD * 100, MEASURED_SECONDS, WARMUP_SECONDS, SEED));
		out.append("| strategy | shares 1 / 2 / 3 / 4 / 5 (%) | utilization 1 / 2 / 3 / 4 / 5 (%) | "
				+ "spread (points) | mean (ms) | p99 (ms) |\n");
		out.append("|---|---|---|---:|---:|---:|\n");
		for (Result result : results) {
			out.append(String.format(Locale.ROOT, "| %s | %s | %s | %.1f | %.1f | %.1f |%n", result.contender().label(),
					percents(result.shares()), percents(result.utilization()), result.utilizationSpread() * 100,
					result.meanMillis(), result.p99Millis()));
		}
		return out.toString();
	}

	private static String percents(double[] values) {
		StringBuilder text = new StringBuilder();
		for (double value : values) {
			text.append((text.length() > 0) ? " / " : "").append(String.format(Locale.ROOT, "%.1f", value * 100));
		}
		return text.toString();
	}

	/**
	 * What one contender did over the measured window.
	 *
	 * @param contender the strategy
	 * @param shares each instance's share of the requests that arrived in the window
	 * @param utilization each instance's busy share of its workers' time in the window
	 * @param meanMillis mean response time (queue wait + service), ms
	 * @param p99Millis 99th percentile of the response time, ms
	 */
	public record Result(Contender contender, double[] shares, double[] utilization, double meanMillis,
			double p99Millis) {

		/**
		 * Highest minus lowest utilization.
		 * @return a ratio
		 */
		public double utilizationSpread() {
			return Arrays.stream(this.utilization).max().orElse(0) - Arrays.stream(this.utilization).min().orElse(0);
		}

	}

	/** One run: the queues, the event loop, the providers' reports. */
	private static final class Run {

		private final Contender contender;

		private final long seed;

		private long now;

		private final int[] busy = new int[INSTANCES];

		@SuppressWarnings("unchecked")
		private final ArrayDeque<Call>[] queues = new ArrayDeque[INSTANCES];

		private final PriorityQueue<Call> completions = new PriorityQueue<>(
				(a, b) -> (a.done != b.done) ? Long.compare(a.done, b.done) : Long.compare(a.id, b.id));

		/** Per instance: completions and busy ns per 100 ms slot, for its reports. */
		private final long[][] completedSlots = new long[INSTANCES][REPORT_WINDOW_SECONDS * 10];

		private final long[][] busySlots = new long[INSTANCES][REPORT_WINDOW_SECONDS * 10];

		private final long[][] slotEpochs = new long[INSTANCES][REPORT_WINDOW_SECONDS * 10];

		Run(Contender contender, long seed) {
			this.contender = contender;
			this.seed = seed;
			for (int i = 0; i < INSTANCES; i++) {
				this.queues[i] = new ArrayDeque<>();
			}
		}

		Result run() {
			SplittableRandom root = new SplittableRandom(this.seed);
			SplittableRandom arrivals = root.split();
			SplittableRandom sizes = root.split();
			SplittableRandom picks = root.split();
			LongSupplier clock = () -> this.now;
			SimpleMeterRegistry meters = new SimpleMeterRegistry();
			InstanceAttributesParser parser = new InstanceAttributesParser(Fixtures.SERVICE_ID, "version", meters);
			StrategySettings settings = new StrategySettings(Fixtures.SERVICE_ID, parser,
					AllZeroWeightsPolicy.FAIL_OPEN, meters);
			InstanceStats stats = new InstanceStats(PeakEwmaRules.DEFAULTS.decayTime(), clock);
			// the recomputation runs at once, on this thread, on the simulated clock
			ReportedLoad reported = new ReportedLoad(WeightRules.DEFAULTS, (task, delay) -> task.run(), clock);
			SnapshotBalancer<?> balancer = switch (this.contender) {
				case WEIGHTED_ROUND_ROBIN -> new WeightedRoundRobinBalancer(settings, reported);
				case SMOOTH_ROUND_ROBIN -> new SmoothWeightedRoundRobinBalancer(settings, 0L);
				case LEAST_REQUEST -> new LeastRequestBalancer(settings, LeastRequestRules.DEFAULTS, () -> picks);
				case PEAK_EWMA -> new PeakEwmaBalancer(settings, PeakEwmaRules.DEFAULTS.choiceCount(), () -> picks);
			};
			List<ServiceInstance> instances = LatencySimulation.instances();
			InstanceSnapshot snapshot = InstanceSnapshot.of(instances, parser);
			int[] indexes = new int[INSTANCES];
			InstanceKey[] keys = new InstanceKey[INSTANCES];
			for (int position = 0; position < INSTANCES; position++) {
				indexes[position] = instances.indexOf(snapshot.get(position));
				keys[indexes[position]] = snapshot.key(position);
			}
			KeyedPickContext context = new KeyedPickContext(LatencySimulation.USER_HEADER, snapshot, stats);
			context.key = "user";

			double meanService = MEDIAN_SERVICE_MILLIS / 1000 * Math.exp(SIGMA * SIGMA / 2);
			double capacity = (INSTANCES - 2 + 2 * 0.5) * WORKERS / meanService;
			double rate = LOAD * capacity;
			long start = WARMUP_SECONDS * NANOS;
			long end = start + MEASURED_SECONDS * NANOS;
			long[] arrived = new long[INSTANCES];
			long[] busyInWindow = new long[INSTANCES];
			List<Long> responses = new ArrayList<>();
			long id = 0;
			long nextArrival = interarrival(arrivals, rate);
			while (true) {
				Call next = this.completions.peek();
				if (nextArrival < end && (next == null || nextArrival < next.done)) {
					this.now = nextArrival;
					nextArrival += interarrival(arrivals, rate);
					int position = balancer.choose(snapshot, context);
					int instance = indexes[position];
					double factor = halfCapacity(instance) ? 2 : 1;
					long service = (long) (MEDIAN_SERVICE_MILLIS * 1e6 * factor
							* Math.exp(SIGMA * sizes.nextGaussian()));
					Call call = new Call(id++, this.now, instance, service, this.now >= start);
					if (call.measured) {
						arrived[instance]++;
					}
					stats.started(instances.get(instance));
					if (this.busy[instance] < WORKERS) {
						begin(call);
					}
					else {
						this.queues[instance].add(call);
					}
				}
				else if (next != null) {
					this.completions.poll();
					this.now = next.done;
					int instance = next.instance;
					this.busy[instance]--;
					// busy time inside the measured window
					long from = Math.max(next.begun, start);
					long to = Math.min(next.done, end);
					if (to > from) {
						busyInWindow[instance] += to - from;
					}
					if (next.measured) {
						responses.add(next.done - next.arrived);
					}
					stats.completed(instances.get(instance), next.done - next.arrived, false);
					account(instance, next.service);
					reported.record(keys[instance], report(instance));
					Call waiting = this.queues[instance].poll();
					if (waiting != null) {
						begin(waiting);
					}
				}
				else {
					break;
				}
			}
			long total = Arrays.stream(arrived).sum();
			double[] shares = new double[INSTANCES];
			double[] utilization = new double[INSTANCES];
			for (int i = 0; i < INSTANCES; i++) {
				shares[i] = (double) arrived[i] / total;
				utilization[i] = busyInWindow[i] / (double) (WORKERS * (end - start));
			}
			long[] sorted = responses.stream().mapToLong(Long::longValue).sorted().toArray();
			double mean = Arrays.stream(sorted).average().orElse(0) / 1e6;
			double p99 = sorted[(int) Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] / 1e6;
			return new Result(this.contender, shares, utilization, mean, p99);
		}

		private void begin(Call call) {
			this.busy[call.instance]++;
			call.begun = this.now;
			call.done = this.now + call.service;
			this.completions.add(call);
		}

		/** Counts a completion and its service time in the instance's current slot. */
		private void account(int instance, long service) {
			int slot = slot(instance);
			this.completedSlots[instance][slot]++;
			this.busySlots[instance][slot] += service;
		}

		private int slot(int instance) {
			long epoch = this.now / (NANOS / 10);
			int slot = (int) (epoch % this.slotEpochs[instance].length);
			if (this.slotEpochs[instance][slot] != epoch) {
				this.slotEpochs[instance][slot] = epoch;
				this.completedSlots[instance][slot] = 0;
				this.busySlots[instance][slot] = 0;
			}
			return slot;
		}

		/** What the instance reports now: its rate and utilization over its window. */
		private LoadReport report(int instance) {
			long epoch = this.now / (NANOS / 10);
			long completed = 0;
			long busyNanos = 0;
			for (int slot = 0; slot < this.slotEpochs[instance].length; slot++) {
				if (epoch - this.slotEpochs[instance][slot] < this.slotEpochs[instance].length) {
					completed += this.completedSlots[instance][slot];
					busyNanos += this.busySlots[instance][slot];
				}
			}
			double window = REPORT_WINDOW_SECONDS;
			return new LoadReport(busyNanos / (WORKERS * window * NANOS), 0, completed / window, 0);
		}

		private static long interarrival(SplittableRandom random, double rate) {
			return (long) (-Math.log(1 - random.nextDouble()) / rate * NANOS);
		}

	}

	/** One request. */
	private static final class Call {

		final long id;

		final long arrived;

		final int instance;

		final long service;

		final boolean measured;

		long begun;

		long done;

		Call(long id, long arrived, int instance, long service, boolean measured) {
			this.id = id;
			this.arrived = arrived;
			this.instance = instance;
			this.service = service;
			this.measured = measured;
		}

	}

}
