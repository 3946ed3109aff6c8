package dev.atlas.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.overload.RetryBudgetRules;
import org.jspecify.annotations.Nullable;

/**
 * Deterministic discrete-event simulation of a retry storm: a fleet that loses capacity
 * while its callers retry in two layers, with and without Atlas's retry budget and
 * overload marker, next to Spring Cloud's defaults. No network, no threads, a simulated
 * clock (ns), every draw seeded.
 *
 * <p>
 * <strong>The model.</strong>
 * <ul>
 * <li>A <em>capped service</em> of {@value #INSTANCES} instances, each serving at most
 * {@value #CAPACITY_PER_INSTANCE} req/s and answering 503 at once above that (fail-fast);
 * service time exponential with mean {@link Fleet#serviceMillis()} ms. An instance caps
 * either what it serves at once ({@link Cap#CONCURRENCY}: {@link Fleet#slots()} requests,
 * a semaphore; {@link Fleet#STORM}: 20 slots, 200 ms; {@link Fleet#WIDE}: 50 slots, 500
 * ms) or what it accepts per second ({@link Cap#RATE}, {@link Fleet#RATE_LIMITED}: a
 * limit of {@value #CAPACITY_PER_INSTANCE} requests over the last second, counted in two
 * buckets of 500 ms as Sentinel's QPS flow rule with its default fast failure).</li>
 * <li>At {@value #DROP_SECOND} s, {@value #LOST} instances stop: connections to them are
 * refused at once, and they leave the callers' instance list {@value #DEREGISTER_MILLIS}
 * ms later (the registry's event). Capacity drops from 1,000 to 600 req/s.</li>
 * <li>An <em>edge</em> (a gateway running Atlas) receives {@value #OFFERED} req/s,
 * Poisson, and calls a <em>middle service</em> (running Atlas) with a Retry of 3 on 503
 * (back-off 10, 20, 40 ms, as the sample gateway's filter); the middle service calls the
 * capped one with Spring Cloud LoadBalancer's retry: one retry on another instance (the
 * one that failed left out), on a connect failure and, under Atlas's defaults, on 503.
 * Instances are chosen at random (Atlas's default strategy, {@code weighted-random}, over
 * equal weights). The middle service has capacity to spare; it answers 503 when its call
 * failed.</li>
 * <li>With the budget, each caller has one {@link RetryBudget} per service it calls
 * (defaults: ratio 0.2, 10 retries per second, window 10 s), on the simulated clock; each
 * request deposits, each retry withdraws. With the overload marker (Atlas's
 * {@code X-Atlas-Overloaded}), the middle service marks its 503 when it gave up on a
 * retryable failure (its retry refused by the budget, or made and failed too, or every
 * instance at the limit), and the edge does not retry a marked answer.</li>
 * </ul>
 * Measured per second: offered (logical requests at the edge), attempts reaching the
 * capped service (refused connections to stopped instances apart), goodput (logical
 * requests that succeeded, by when they succeeded) and amplification (attempts per
 * offered request).
 *
 * <p>
 * <strong>What no policy can beat.</strong> On a fleet that caps concurrency, a request
 * that finds every instance busy and is not tried again later is lost: with the capacity
 * left pooled and every request sent to a free slot if there is one (perfect routing),
 * goodput is the offered rate times one minus the Erlang B loss probability (Erlang,
 * 1917) of {@code offered × service time} erlangs over {@code 6 × slots} servers:
 * {@link #lossBound(Fleet)}, 587 req/s for {@link Fleet#STORM} and 594 for
 * {@link Fleet#WIDE}. Only re-attempts made later (the edge's back-off) can exceed it,
 * and the marker stops them where the middle service gave up on overload. A fleet that
 * caps its rate serves its whole capacity, 600 req/s, whenever each instance is offered
 * more than it accepts.
 */
public final class FleetSimulation {

	/** Instances of the capped service. */
	public static final int INSTANCES = 10;

	/**
	 * Capacity of one instance, req/s: slots / mean service time on a fleet that caps
	 * concurrency, the rate limit on one that caps its rate.
	 */
	public static final int CAPACITY_PER_INSTANCE = 100;

	/** Requests per second offered at the edge. */
	public static final int OFFERED = 800;

	/** Instances that stop. */
	public static final int LOST = 4;

	/** When they stop, s. */
	public static final int DROP_SECOND = 20;

	/** How long stopped instances stay listed, ms. */
	public static final int DEREGISTER_MILLIS = 2000;

	/** Length of a run, s. */
	public static final int SECONDS = 80;

	/** Retries of the edge's Retry filter. */
	static final int EDGE_RETRIES = 3;

	/**
	 * Length of a bucket of a rate-capped instance's window, ms: the window is two
	 * buckets, 1 s.
	 */
	static final int RATE_BUCKET_MILLIS = 500;

	private static final long NANOS_PER_MILLI = 1_000_000L;

	private static final long NANOS_PER_SECOND = 1_000_000_000L;

	private static final long[] EDGE_BACKOFF_NANOS = { 10 * NANOS_PER_MILLI, 20 * NANOS_PER_MILLI,
			40 * NANOS_PER_MILLI };

	private FleetSimulation() {
	}

	/**
	 * Runs the storm scenario on {@link Fleet#STORM}.
	 * @param policy how the callers retry
	 * @param seed the seed of every draw
	 * @return the measurements
	 */
	public static Result run(Policy policy, long seed) {
		return run(policy, Fleet.STORM, seed);
	}

	/**
	 * Runs the storm scenario.
	 * @param policy how the callers retry
	 * @param fleet how the capped instances cap their load
	 * @param seed the seed of every draw
	 * @return the measurements
	 * @throws IllegalArgumentException for a policy with the in-flight limit on a fleet
	 * that caps its rate
	 */
	public static Result run(Policy policy, Fleet fleet, long seed) {
		return new Run(policy, fleet, seed, OFFERED, 0).run();
	}

	/**
	 * The goodput no policy exceeds without re-attempts made later, after the loss: on a
	 * fleet that caps concurrency, the offered rate times one minus Erlang B of the
	 * offered erlangs over the slots left; on one that caps its rate, the capacity left.
	 * @param fleet how the capped instances cap their load
	 * @return the bound, req/s
	 */
	public static double lossBound(Fleet fleet) {
		if (fleet.cap() == Cap.RATE) {
			return (INSTANCES - LOST) * CAPACITY_PER_INSTANCE;
		}
		double erlangs = OFFERED * fleet.serviceMillis() / 1000.0;
		int servers = (INSTANCES - LOST) * fleet.slots();
		// Erlang B by its recurrence: B(0) = 1, B(k) = A·B(k-1) / (k + A·B(k-1))
		double blocking = 1;
		for (int k = 1; k <= servers; k++) {
			blocking = erlangs * blocking / (k + erlangs * blocking);
		}
		return OFFERED * (1 - blocking);
	}

	/**
	 * Runs a calm scenario: every instance up, {@code offeredPerSecond} requests per
	 * second, each attempt failing with a 503 with probability {@code failureRatio}
	 * whatever the load.
	 * @param policy how the callers retry
	 * @param seed the seed of every draw
	 * @param offeredPerSecond requests per second at the edge
	 * @param failureRatio a ratio 0..1
	 * @return the measurements
	 */
	public static Result runCalm(Policy policy, long seed, int offeredPerSecond, double failureRatio) {
		return new Run(policy, Fleet.STORM, seed, offeredPerSecond, failureRatio).run();
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
		for (Fleet fleet : List.of(Fleet.STORM, Fleet.WIDE, Fleet.RATE_LIMITED)) {
			report(out, fleet, seed);
		}
		return out.toString();
	}

	private static void report(StringBuilder out, Fleet fleet, long seed) {
		List<Result> results = new ArrayList<>();
		for (Policy policy : List.of(Policy.SPRING_CLOUD, Policy.ATLAS_UNBOUNDED, Policy.BUDGET_WITHOUT_MARKER,
				Policy.ATLAS, Policy.ATLAS_LEAST_REQUEST, Policy.ATLAS_LIMIT)) {
			if (!policy.limit() || fleet.cap() == Cap.CONCURRENCY) {
				results.add(run(policy, fleet, seed));
			}
		}
		String cap = (fleet.cap() == Cap.CONCURRENCY)
				? String.format(Locale.ROOT, "%d slots, %d ms", fleet.slots(), fleet.serviceMillis())
				: String.format(Locale.ROOT, "a rate limit, %d ms", fleet.serviceMillis());
		out.append(String.format(Locale.ROOT,
				"Fleet simulation (seed %d): %d instances × %d req/s (%s), %d lost at %d s, %d req/s offered"
						+ " at the edge; no policy without later re-attempts serves more than %.0f req/s after the loss%n%n",
				seed, INSTANCES, CAPACITY_PER_INSTANCE, cap, LOST, DROP_SECOND, OFFERED, lossBound(fleet)));
		out.append("| window (s) |");
		for (Result result : results) {
			out.append(' ').append(result.policy().name()).append(": attempts/s, goodput/s, ×offered |");
		}
		out.append('\n').append("|---|");
		results.forEach((r) -> out.append("---|"));
		out.append('\n');
		for (int from = 0; from + 10 <= SECONDS; from += 10) {
			out.append(String.format(Locale.ROOT, "| %d–%d |", from, from + 10));
			for (Result result : results) {
				double attempts = Result.mean(result.attempts(), from);
				out.append(String.format(Locale.ROOT, " %.0f, %.0f, %.2f× |", attempts,
						Result.mean(result.goodput(), from), attempts / Result.mean(result.offered(), from)));
			}
			out.append('\n');
		}
		out.append('\n');
	}

	/** How a capped instance refuses what is above its capacity. */
	public enum Cap {

		/** A number of requests at once (a semaphore): 503 when every slot is taken. */
		CONCURRENCY,

		/**
		 * {@value FleetSimulation#CAPACITY_PER_INSTANCE} requests accepted over the last
		 * second: 503 above it, as Sentinel's QPS flow rule with its default fast failure
		 * (a sliding window of two buckets of {@value FleetSimulation#RATE_BUCKET_MILLIS}
		 * ms); what it accepts is served whatever is in flight.
		 */
		RATE

	}

	/**
	 * The capped instances: each serves {@value #CAPACITY_PER_INSTANCE} req/s.
	 *
	 * @param cap how an instance refuses what is above its capacity
	 * @param slots requests an instance takes at once before it answers 503
	 * ({@link Cap#CONCURRENCY}); 0 with {@link Cap#RATE}
	 * @param serviceMillis mean of the exponential service time, ms, {@code > 0}; with
	 * {@link Cap#RATE} it does not bound what an instance serves
	 */
	public record Fleet(Cap cap, int slots, int serviceMillis) {

		/** 20 slots × 200 ms. */
		public static final Fleet STORM = new Fleet(Cap.CONCURRENCY, 20, 200);

		/** 50 slots × 500 ms: the same capacity, more requests at once. */
		public static final Fleet WIDE = new Fleet(Cap.CONCURRENCY, 50, 500);

		/**
		 * A rate limit of {@value FleetSimulation#CAPACITY_PER_INSTANCE} req/s per
		 * instance, answers of 200 ms on average.
		 */
		public static final Fleet RATE_LIMITED = new Fleet(Cap.RATE, 0, 200);

		/**
		 * Validates.
		 * @throws NullPointerException when {@code cap} is {@code null}
		 * @throws IllegalArgumentException when {@code serviceMillis <= 0}; when a fleet
		 * that caps concurrency does not serve
		 * {@value FleetSimulation#CAPACITY_PER_INSTANCE} req/s per instance
		 * ({@code slots × 1000 / serviceMillis}); when a fleet that caps its rate has
		 * slots
		 */
		public Fleet {
			Objects.requireNonNull(cap, "cap");
			boolean valid = (cap == Cap.CONCURRENCY)
					? slots > 0 && serviceMillis > 0 && slots * 1000L == CAPACITY_PER_INSTANCE * (long) serviceMillis
					: slots == 0 && serviceMillis > 0;
			if (!valid) {
				throw new IllegalArgumentException("a fleet's instance serves " + CAPACITY_PER_INSTANCE
						+ " req/s: slots × 1000 / serviceMillis when it caps concurrency, no slots when it caps its"
						+ " rate; was " + cap + ", " + slots + " × 1000 / " + serviceMillis);
			}
		}

	}

	/**
	 * How the callers retry.
	 *
	 * @param name shown in the report
	 * @param middleRetries503 whether the middle service retries a 503 (Atlas's default
	 * adds 503 to Spring Cloud's retryable statuses; Spring Cloud's retries connect
	 * failures only)
	 * @param budget the retry budget of both callers: {@link RetryBudgetRules#DEFAULTS},
	 * {@link RetryBudgetRules#OFF} (every retry allowed) or {@link #NO_RETRY_ALLOWED}
	 * @param marker whether the middle service marks an overload it gave up on, and the
	 * edge does not retry it
	 * @param leastRequest whether the middle service chooses with {@code least-request}
	 * (P2C over requests in flight) rather than at random
	 * @param limit whether the middle service has {@code max-in-flight-per-instance} at
	 * the capped instances' {@link Fleet#slots()}: a full instance is skipped, and a
	 * request that finds every instance full fails at once (saturated), not retried by
	 * the middle service; only on a fleet that caps concurrency
	 */
	public record Policy(String name, boolean middleRetries503, RetryBudgetRules budget, boolean marker,
			boolean leastRequest, boolean limit) {

		/** A budget that refuses every retry: ratio 0, no minimum. */
		public static final RetryBudgetRules NO_RETRY_ALLOWED = new RetryBudgetRules(true, 0, 0,
				RetryBudgetRules.DEFAULTS.window());

		/** Spring Cloud's defaults, with the edge's Retry of 3. */
		public static final Policy SPRING_CLOUD = new Policy("Spring Cloud defaults", false, RetryBudgetRules.OFF,
				false, false, false);

		/** Atlas's retry of 503 without the budget or the marker. */
		public static final Policy ATLAS_UNBOUNDED = new Policy("Atlas, no budget", true, RetryBudgetRules.OFF, false,
				false, false);

		/**
		 * The budget alone: an edge that does not read the marker (a caller without
		 * Atlas's support, such as a gateway without it).
		 */
		public static final Policy BUDGET_WITHOUT_MARKER = new Policy("Atlas's budget, marker not read", true,
				RetryBudgetRules.DEFAULTS, false, false, false);

		/** Atlas's defaults: the budget in both callers, and the overload marker. */
		public static final Policy ATLAS = new Policy("Atlas's defaults (budget + marker)", true,
				RetryBudgetRules.DEFAULTS, true, false, false);

		/** {@link #ATLAS} with {@code least-request} in the middle service. */
		public static final Policy ATLAS_LEAST_REQUEST = new Policy("Atlas's defaults, least-request", true,
				RetryBudgetRules.DEFAULTS, true, true, false);

		/** {@link #ATLAS} with the per-instance in-flight limit in the middle service. */
		public static final Policy ATLAS_LIMIT = new Policy("Atlas's defaults + max-in-flight-per-instance", true,
				RetryBudgetRules.DEFAULTS, true, false, true);

		/**
		 * No retry at all (every retry refused, no attempt marked): what goodput is when
		 * nothing is tried again, connections refused by the stopped instances included.
		 */
		public static final Policy NO_RETRIES = new Policy("no retries", true, NO_RETRY_ALLOWED, false, false, false);

		/**
		 * Validates.
		 * @throws NullPointerException when {@code name} or {@code budget} is
		 * {@code null}
		 */
		public Policy {
			Objects.requireNonNull(name, "name");
			Objects.requireNonNull(budget, "budget");
		}

	}

	/**
	 * What one run measured, per second of simulated time.
	 *
	 * @param policy the callers' retry policy
	 * @param offered logical requests arrived at the edge in each second
	 * @param attempts attempts that reached an instance of the capped service in each
	 * second
	 * @param refused attempts refused by a stopped instance in each second
	 * @param goodput logical requests that succeeded in each second
	 * @param budgetExhausted retries refused by the callers' budgets over the run
	 */
	public record Result(Policy policy, int[] offered, int[] attempts, int[] refused, int[] goodput,
			long budgetExhausted) {

		/**
		 * A 10 s window's mean per second.
		 * @param series one of this result's series
		 * @param from the window's first second
		 * @return the mean
		 */
		public static double mean(int[] series, int from) {
			return sum(series, from, 10) / 10.0;
		}

		static long sum(int[] series, int from, int length) {
			long sum = 0;
			for (int s = from; s < from + length; s++) {
				sum += series[s];
			}
			return sum;
		}

	}

	/** One run; not thread-safe. */
	private static final class Run {

		private final Policy policy;

		private final Fleet fleet;

		private final int offeredPerSecond;

		private final double failureRatio;

		private final SplittableRandom arrivals;

		private final SplittableRandom service;

		private final SplittableRandom picks;

		private final SplittableRandom failures;

		private final PriorityQueue<Event> events = new PriorityQueue<>(
				(a, b) -> (a.at != b.at) ? Long.compare(a.at, b.at) : Long.compare(a.id, b.id));

		private final int[] busy = new int[INSTANCES];

		/** A rate-capped instance's current bucket: its index, and what it accepted. */
		private final long[] bucket = new long[INSTANCES];

		private final int[] acceptedNow = new int[INSTANCES];

		/** What it accepted in the bucket before. */
		private final int[] acceptedBefore = new int[INSTANCES];

		private final boolean[] stopped = new boolean[INSTANCES];

		private final boolean[] listed = new boolean[INSTANCES];

		private final RetryBudget edgeBudget;

		private final RetryBudget middleBudget;

		private final int[] offered = new int[SECONDS];

		private final int[] attempts = new int[SECONDS];

		private final int[] refused = new int[SECONDS];

		private final int[] goodput = new int[SECONDS];

		private long now;

		private long nextId;

		Run(Policy policy, Fleet fleet, long seed, int offeredPerSecond, double failureRatio) {
			if (policy.limit() && fleet.cap() != Cap.CONCURRENCY) {
				throw new IllegalArgumentException("the in-flight limit is modelled on a fleet that caps concurrency");
			}
			this.policy = policy;
			this.fleet = fleet;
			this.offeredPerSecond = offeredPerSecond;
			this.failureRatio = failureRatio;
			SplittableRandom root = new SplittableRandom(seed);
			this.arrivals = root.split();
			this.service = root.split();
			this.picks = root.split();
			this.failures = root.split();
			RetryBudgetRules rules = policy.budget();
			// Both budgets start with the clock: their slices of 1 s line up with the
			// seconds measured.
			this.edgeBudget = new RetryBudget(rules, () -> this.now);
			this.middleBudget = new RetryBudget(rules, () -> this.now);
			Arrays.fill(this.listed, true);
		}

		Result run() {
			long end = SECONDS * NANOS_PER_SECOND;
			schedule(exponential(this.arrivals, NANOS_PER_SECOND / (double) this.offeredPerSecond), Kind.ARRIVAL, null,
					-1);
			if (this.failureRatio == 0) {
				schedule(DROP_SECOND * NANOS_PER_SECOND, Kind.DROP, null, -1);
				schedule(DROP_SECOND * NANOS_PER_SECOND + DEREGISTER_MILLIS * NANOS_PER_MILLI, Kind.DEREGISTER, null,
						-1);
			}
			while (!this.events.isEmpty() && this.events.peek().at < end) {
				Event event = this.events.poll();
				this.now = event.at;
				switch (event.kind) {
					case ARRIVAL -> {
						this.offered[second()]++;
						edgeAttempt(new Logical());
						schedule(this.now
								+ exponential(this.arrivals, NANOS_PER_SECOND / (double) this.offeredPerSecond),
								Kind.ARRIVAL, null, -1);
					}
					case EDGE_RETRY -> edgeAttempt(Objects.requireNonNull(event.request));
					case SERVED -> {
						this.busy[event.instance]--;
						this.goodput[second()]++;
					}
					case DROP -> {
						for (int i = 0; i < LOST; i++) {
							this.stopped[i] = true;
						}
					}
					case DEREGISTER -> {
						for (int i = 0; i < LOST; i++) {
							this.listed[i] = false;
						}
					}
				}
			}
			return new Result(this.policy, this.offered, this.attempts, this.refused, this.goodput,
					this.edgeBudget.exhausted() + this.middleBudget.exhausted());
		}

		/** The edge calls the middle service, which calls the capped one. */
		private void edgeAttempt(Logical request) {
			Answer answer = middleRequest();
			if (answer == Answer.SERVING) {
				// its success is counted when the capped instance has served it
				return;
			}
			boolean retryable = !(this.policy.marker() && answer == Answer.OVERLOAD_MARKED);
			if (retryable && request.edgeRetries < EDGE_RETRIES && this.edgeBudget.tryWithdraw()) {
				long backoff = EDGE_BACKOFF_NANOS[request.edgeRetries];
				request.edgeRetries++;
				schedule(this.now + backoff, Kind.EDGE_RETRY, request, -1);
			}
		}

		/**
		 * One request of the middle service: an attempt on the capped service and, when
		 * it fails retryably, one retry on another instance within the budget.
		 */
		private Answer middleRequest() {
			this.middleBudget.deposit();
			int first = pick(-1);
			if (first < 0) {
				// every instance at the limit: saturated, failed at once, never retried
				// here (the marker, when modelled, tells the edge not to retry it either)
				return Answer.OVERLOAD_MARKED;
			}
			Outcome outcome = attempt(first);
			if (outcome == Outcome.SERVING) {
				return Answer.SERVING;
			}
			boolean retryable = outcome == Outcome.REFUSED || this.policy.middleRetries503();
			if (!retryable) {
				return Answer.FAILED;
			}
			if (!this.middleBudget.tryWithdraw()) {
				return Answer.OVERLOAD_MARKED;
			}
			int second = pick(first);
			if (second < 0) {
				return Answer.OVERLOAD_MARKED;
			}
			Outcome retried = attempt(second);
			if (retried == Outcome.SERVING) {
				return Answer.SERVING;
			}
			// Atlas marks a last retry answered with a retryable status, not one whose
			// connection was refused
			return (retried == Outcome.OVERLOADED) ? Answer.OVERLOAD_MARKED : Answer.FAILED;
		}

		private Outcome attempt(int instance) {
			if (this.stopped[instance]) {
				this.refused[second()]++;
				return Outcome.REFUSED;
			}
			this.attempts[second()]++;
			if (!admits(instance) || (this.failureRatio > 0 && this.failures.nextDouble() < this.failureRatio)) {
				return Outcome.OVERLOADED;
			}
			this.busy[instance]++;
			schedule(this.now + exponential(this.service, this.fleet.serviceMillis() * (double) NANOS_PER_MILLI),
					Kind.SERVED, null, instance);
			return Outcome.SERVING;
		}

		/**
		 * Whether the instance takes one more request now; counts it in its rate window
		 * when it caps its rate.
		 */
		private boolean admits(int instance) {
			if (this.fleet.cap() == Cap.CONCURRENCY) {
				return this.busy[instance] < this.fleet.slots();
			}
			long current = this.now / (RATE_BUCKET_MILLIS * NANOS_PER_MILLI);
			if (current != this.bucket[instance]) {
				this.acceptedBefore[instance] = (current == this.bucket[instance] + 1) ? this.acceptedNow[instance] : 0;
				this.acceptedNow[instance] = 0;
				this.bucket[instance] = current;
			}
			if (this.acceptedBefore[instance] + this.acceptedNow[instance] >= CAPACITY_PER_INSTANCE) {
				return false;
			}
			this.acceptedNow[instance]++;
			return true;
		}

		/**
		 * A listed instance other than {@code avoid} (when there is another): at random,
		 * or, with {@code least-request}, the one with fewer requests in flight of two
		 * drawn at random (P2C).
		 */
		private int pick(int avoid) {
			int first = draw(avoid);
			if (first < 0 || !this.policy.leastRequest()) {
				return first;
			}
			int second = draw(avoid);
			return (this.busy[second] < this.busy[first]) ? second : first;
		}

		/**
		 * A listed instance other than {@code avoid}, at random; with the limit, one with
		 * a free slot (the middle service is the capped service's only caller, so its
		 * requests in flight are the instance's). {@code -1} when there is none.
		 */
		private int draw(int avoid) {
			int candidates = 0;
			for (int i = 0; i < INSTANCES; i++) {
				if (candidate(i, avoid)) {
					candidates++;
				}
			}
			if (candidates == 0) {
				return -1;
			}
			int chosen = this.picks.nextInt(candidates);
			for (int i = 0; i < INSTANCES; i++) {
				if (candidate(i, avoid) && chosen-- == 0) {
					return i;
				}
			}
			throw new IllegalStateException("no instance");
		}

		private boolean candidate(int instance, int avoid) {
			return this.listed[instance] && instance != avoid
					&& (!this.policy.limit() || this.busy[instance] < this.fleet.slots());
		}

		private int second() {
			return (int) Math.min(SECONDS - 1, this.now / NANOS_PER_SECOND);
		}

		private void schedule(long at, Kind kind, @Nullable Logical request, int instance) {
			this.events.add(new Event(at, this.nextId++, kind, request, instance));
		}

		private static long exponential(SplittableRandom random, double meanNanos) {
			return (long) (-Math.log(1 - random.nextDouble()) * meanNanos);
		}

	}

	private enum Kind {

		ARRIVAL, EDGE_RETRY, SERVED, DROP, DEREGISTER

	}

	private enum Outcome {

		SERVING, OVERLOADED, REFUSED

	}

	private enum Answer {

		SERVING, FAILED, OVERLOAD_MARKED

	}

	/** A logical request at the edge. */
	private static final class Logical {

		int edgeRetries;

	}

	private record Event(long at, long id, Kind kind, @Nullable Logical request, int instance) {
	}

}
