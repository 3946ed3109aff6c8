package dev.atlas.benchmarks;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

import dev.atlas.benchmarks.LatencySimulation.Contender;
import dev.atlas.benchmarks.LatencySimulation.Result;
import dev.atlas.benchmarks.LatencySimulation.Scenario;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.stats.InstanceStats;

import org.springframework.cloud.client.ServiceInstance;

/**
 * One run of {@link LatencySimulation}: a discrete-event simulation of the five
 * instances, each a queue served by {@value LatencySimulation#WORKERS} workers (an M/G/c
 * queue per instance: Poisson arrivals, log-normal service times), on a simulated
 * nanosecond clock, with the contender choosing each request's instance and the run's
 * {@link InstanceStats} fed as the request lifecycle feeds them. Deterministic for a
 * seed. Not thread-safe: one run, on one thread.
 */
final class QueueingRun {

	private final Contender contender;

	private final Scenario scenario;

	private final double rate;

	private final long seed;

	private long now;

	private final int[] busy = new int[LatencySimulation.INSTANCES];

	@SuppressWarnings("unchecked")
	private final ArrayDeque<Call>[] queues = new ArrayDeque[LatencySimulation.INSTANCES];

	private final PriorityQueue<Call> completions = new PriorityQueue<>(
			(a, b) -> (a.done != b.done) ? Long.compare(a.done, b.done) : Long.compare(a.id, b.id));

	private long[] responses = new long[1 << 16];

	private int measured;

	QueueingRun(Contender contender, Scenario scenario, double rate, long seed) {
		this.contender = contender;
		this.scenario = scenario;
		this.rate = rate;
		this.seed = seed;
		for (int i = 0; i < LatencySimulation.INSTANCES; i++) {
			this.queues[i] = new ArrayDeque<>();
		}
	}

	/** Runs it; {@link Result#seeded()} is set by the caller. */
	Result run() {
		SplittableRandom root = new SplittableRandom(this.seed);
		SplittableRandom arrivals = root.split();
		SplittableRandom sizes = root.split();
		SplittableRandom users = root.split();
		SplittableRandom picks = root.split();
		String[] userKeys = new String[LatencySimulation.USERS];
		for (int u = 0; u < LatencySimulation.USERS; u++) {
			userKeys[u] = "user-" + u;
		}
		LongSupplier clock = () -> this.now;
		InstanceStats stats = new InstanceStats(PeakEwmaRules.DEFAULTS.decayTime(), clock);
		List<ServiceInstance> instances = LatencySimulation.instances();
		SimulatedChoosers.Chooser chooser = SimulatedChoosers.chooser(this.contender, instances, stats, picks);

		long start = LatencySimulation.WARMUP_SECONDS * LatencySimulation.NANOS_PER_SECOND;
		long end = start + this.scenario.seconds() * LatencySimulation.NANOS_PER_SECOND;
		int toSlow = 0;
		int whileSlow = 0;
		int toSlowWhileSlow = 0;
		long id = 0;
		long nextArrival = interarrival(arrivals);
		while (true) {
			Call next = this.completions.peek();
			if (nextArrival < end && (next == null || nextArrival < next.done)) {
				this.now = nextArrival;
				nextArrival += interarrival(arrivals);
				Call call = new Call(id++, this.now, sizes.nextGaussian(), this.now >= start);
				String userKey = userKeys[users.nextInt(LatencySimulation.USERS)];
				int instance = chooser.choose(userKey);
				call.instance = instance;
				stats.started(instances.get(instance));
				if (call.measured) {
					boolean slow = this.scenario.slowAt(this.now);
					if (instance == LatencySimulation.SLOW) {
						toSlow++;
					}
					if (slow) {
						whileSlow++;
						if (instance == LatencySimulation.SLOW) {
							toSlowWhileSlow++;
						}
					}
				}
				if (this.busy[instance] < LatencySimulation.WORKERS) {
					serve(call);
				}
				else {
					this.queues[instance].add(call);
				}
			}
			else if (next != null) {
				this.completions.poll();
				this.now = next.done;
				long response = this.now - next.arrival;
				stats.completed(instances.get(next.instance), response);
				if (next.measured) {
					record(response);
				}
				this.busy[next.instance]--;
				Call queued = this.queues[next.instance].poll();
				if (queued != null) {
					serve(queued);
				}
			}
			else {
				break;
			}
		}
		long[] sorted = Arrays.copyOf(this.responses, this.measured);
		Arrays.sort(sorted);
		return new Result(this.contender, this.scenario, this.rate, this.measured, toSlow / (double) this.measured,
				(whileSlow > 0) ? toSlowWhileSlow / (double) whileSlow : Double.NaN, percentile(sorted, 0.50),
				percentile(sorted, 0.99), sorted[sorted.length - 1] / 1e6, true);
	}

	private long interarrival(SplittableRandom random) {
		double seconds = -Math.log(1 - random.nextDouble()) / this.rate;
		return Math.max(1, Math.round(seconds * LatencySimulation.NANOS_PER_SECOND));
	}

	private void serve(Call call) {
		this.busy[call.instance]++;
		double millis = LatencySimulation.MEDIAN_SERVICE_MILLIS * Math.exp(LatencySimulation.SIGMA * call.size);
		if (call.instance == LatencySimulation.SLOW && this.scenario.slowAt(this.now)) {
			millis *= LatencySimulation.SLOW_FACTOR;
		}
		call.done = this.now + Math.max(1, Math.round(millis * 1e6));
		this.completions.add(call);
	}

	private void record(long response) {
		if (this.measured == this.responses.length) {
			this.responses = Arrays.copyOf(this.responses, this.responses.length * 2);
		}
		this.responses[this.measured++] = response;
	}

	/** Nearest rank, in ms. */
	private static double percentile(long[] sorted, double p) {
		int rank = (int) Math.ceil(p * sorted.length);
		return sorted[Math.max(0, rank - 1)] / 1e6;
	}

	/** One request. */
	private static final class Call {

		final long id;

		final long arrival;

		/** Standard normal variate of the service time. */
		final double size;

		final boolean measured;

		int instance;

		/** When it completes; set when its service starts. */
		long done;

		Call(long id, long arrival, double size, boolean measured) {
			this.id = id;
			this.arrival = arrival;
			this.size = size;
			this.measured = measured;
		}

	}

}
