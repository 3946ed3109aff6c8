package dev.atlas.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;

import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

/**
 * Deterministic simulation of Atlas's {@code ring-hash}, no network: how many keys move
 * when an instance joins or leaves, and how evenly keys and requests spread, with and
 * without bounded load. Every key goes through {@code RingHashBalancer.choose(snapshot,
 * context)} with the key in a request header ({@value #KEY_HEADER}), 160 points per
 * instance; instances are {@code 10.0.x.y:8080} of equal weight, told apart on the ring
 * by host and port.
 *
 * <p>
 * <strong>Keys moved.</strong> {@value #KEYS} random keys are looked up on N instances
 * and again after one instance (chosen with the seed) leaves, or after a new one joins;
 * the ideal is the share of the instance that leaves (1/N) or joins (1/(N+1)). Also
 * counted: keys that moved between two instances that both stayed (consistent hashing
 * allows none).
 *
 * <p>
 * <strong>Balance.</strong> Keys or requests are assigned one after the other to
 * {@value #BALANCE_INSTANCES} instances and <em>held</em>: each assignment is
 * {@code InstanceStats.started} on the chosen instance and never completed, so bounded
 * load sees every earlier assignment in flight. Workloads: {@value #KEYS} distinct random
 * keys; {@value #KEYS} requests whose keys follow Zipf(s = {@value #ZIPF_S}) over
 * {@value #ZIPF_KEYS} keys (a hot key: the first gets 18 % of the requests). Reported:
 * max ÷ mean of the per-instance count at the end, and at how many steps the count of
 * some instance exceeded {@code ceil(1.25 × assigned ÷ n)}, the bound of bounded load
 * after rounding.
 *
 * <p>
 * Run {@link #main} for the Markdown; {@link QualitySimulation#main} prints it too.
 * Single-threaded; not thread-safe.
 */
public final class HashingSimulation {

	/** The seed. */
	public static final long SEED = 42L;

	/** Keys looked up, and requests of the balance workloads. */
	public static final int KEYS = 10_000;

	/** Instances of the balance runs. */
	public static final int BALANCE_INSTANCES = 10;

	/** Distinct keys of the hot-key workload. */
	public static final int ZIPF_KEYS = 1_000;

	/** Exponent of the hot-key workload's Zipf distribution. */
	public static final double ZIPF_S = 1.1;

	/** The header that carries the key. */
	public static final String KEY_HEADER = "x-user-id";

	/** Load factor of bounded load (the default). */
	public static final double LOAD_FACTOR = HashRules.DEFAULT_LOAD_FACTOR;

	/** Fleet sizes of the join / leave runs. */
	static final int[] SIZES = { 5, 10, 50 };

	private HashingSimulation() {
	}

	/**
	 * Prints the simulation's Markdown.
	 * @param args ignored
	 */
	public static void main(String[] args) {
		System.out.println(run(SEED).markdown());
	}

	/**
	 * Runs the simulation.
	 * @param seed the seed
	 * @return the results
	 */
	public static Report run(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		String[] keys = new String[KEYS];
		for (int k = 0; k < KEYS; k++) {
			keys[k] = "key-" + Long.toHexString(random.nextLong());
		}
		List<Movement> movements = new ArrayList<>();
		for (int n : SIZES) {
			movements.add(leave(n, keys, random.nextInt(n)));
			movements.add(join(n, keys));
		}
		List<Balance> balances = new ArrayList<>();
		String distinct = String.format(Locale.ROOT, "%,d distinct random keys", KEYS);
		balances.add(balance(distinct, keys, false));
		balances.add(balance(distinct, keys, true));
		String[] hot = zipf(random);
		String zipf = String.format(Locale.ROOT, "%,d requests, Zipf(s = %s) over %,d keys (hot key: %.1f %%)", KEYS,
				ZIPF_S, ZIPF_KEYS, hottestShare(hot) * 100);
		balances.add(balance(zipf, hot, false));
		balances.add(balance(zipf, hot, true));
		return new Report(seed, movements, balances);
	}

	/** Instance {@code i}: {@code 10.0.(i / 200).(i % 200 + 1):8080}. */
	static ServiceInstance instance(int i) {
		return new DefaultServiceInstance("i" + (i + 1), Fixtures.SERVICE_ID, "10.0." + (i / 200) + '.' + (i % 200 + 1),
				8080, false);
	}

	private static List<ServiceInstance> fleet(int n) {
		List<ServiceInstance> fleet = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			fleet.add(instance(i));
		}
		return fleet;
	}

	private static Movement leave(int n, String[] keys, int leaving) {
		List<ServiceInstance> before = fleet(n);
		ServiceInstance[] was = lookUp(before, keys);
		double min = 1;
		double max = 0;
		Movement chosen = null;
		for (int gone = 0; gone < n; gone++) {
			List<ServiceInstance> after = new ArrayList<>(before);
			ServiceInstance left = after.remove(gone);
			ServiceInstance[] is = lookUp(after, keys);
			int moved = 0;
			int betweenStayers = 0;
			for (int k = 0; k < keys.length; k++) {
				if (is[k] != was[k]) {
					moved++;
					if (was[k] != left) {
						betweenStayers++;
					}
				}
			}
			double share = moved / (double) keys.length;
			min = Math.min(min, share);
			max = Math.max(max, share);
			if (gone == leaving) {
				chosen = new Movement(n, false, 1.0 / n, share, betweenStayers, Double.NaN, Double.NaN);
			}
		}
		Objects.requireNonNull(chosen, "leaving is one of the n instances");
		return new Movement(n, false, chosen.ideal(), chosen.moved(), chosen.movedBetweenStayers(), min, max);
	}

	private static Movement join(int n, String[] keys) {
		List<ServiceInstance> before = fleet(n);
		ServiceInstance[] was = lookUp(before, keys);
		List<ServiceInstance> after = fleet(n + 1);
		ServiceInstance joined = after.get(n);
		ServiceInstance[] is = lookUp(after, keys);
		int moved = 0;
		int betweenStayers = 0;
		for (int k = 0; k < keys.length; k++) {
			// Instances of the two lists are distinct objects: compare addresses.
			if (!sameAddress(is[k], was[k])) {
				moved++;
				if (is[k] != joined) {
					betweenStayers++;
				}
			}
		}
		return new Movement(n, true, 1.0 / (n + 1), moved / (double) keys.length, betweenStayers, Double.NaN,
				Double.NaN);
	}

	private static boolean sameAddress(ServiceInstance a, ServiceInstance b) {
		return a.getHost().equals(b.getHost()) && a.getPort() == b.getPort();
	}

	/** Each key's instance, nothing in flight, a fresh balancer. */
	private static ServiceInstance[] lookUp(List<ServiceInstance> fleet, String[] keys) {
		Ring ring = new Ring(fleet, false);
		ServiceInstance[] chosen = new ServiceInstance[keys.length];
		for (int k = 0; k < keys.length; k++) {
			chosen[k] = ring.pick(keys[k], false);
		}
		return chosen;
	}

	private static Balance balance(String workload, String[] requests, boolean bounded) {
		List<ServiceInstance> fleet = fleet(BALANCE_INSTANCES);
		Ring ring = new Ring(fleet, bounded);
		int[] counts = new int[BALANCE_INSTANCES];
		int max = 0;
		int stepsOverBound = 0;
		for (int r = 0; r < requests.length; r++) {
			ServiceInstance chosen = ring.pick(requests[r], true);
			int index = fleet.indexOf(chosen);
			counts[index]++;
			max = Math.max(max, counts[index]);
			int assigned = r + 1;
			if (max > Math.ceil(LOAD_FACTOR * assigned / BALANCE_INSTANCES)) {
				stepsOverBound++;
			}
		}
		double mean = requests.length / (double) BALANCE_INSTANCES;
		return new Balance(workload, BALANCE_INSTANCES, requests.length, bounded, max / mean, stepsOverBound,
				hottestShare(requests));
	}

	/**
	 * {@value #KEYS} requests whose keys {@code hot-1} … {@code hot-1000} follow
	 * Zipf({@value #ZIPF_S}).
	 */
	private static String[] zipf(SplittableRandom random) {
		double[] cumulative = new double[ZIPF_KEYS];
		double sum = 0;
		for (int k = 1; k <= ZIPF_KEYS; k++) {
			sum += Math.pow(k, -ZIPF_S);
			cumulative[k - 1] = sum;
		}
		String[] requests = new String[KEYS];
		for (int r = 0; r < KEYS; r++) {
			double u = random.nextDouble() * sum;
			int found = Arrays.binarySearch(cumulative, u);
			int rank = (found >= 0) ? found : -found - 1;
			requests[r] = "hot-" + (Math.min(rank, ZIPF_KEYS - 1) + 1);
		}
		return requests;
	}

	private static double hottestShare(String[] requests) {
		Map<String, Integer> counts = new HashMap<>();
		int max = 0;
		for (String request : requests) {
			max = Math.max(max, counts.merge(request, 1, Integer::sum));
		}
		return max / (double) requests.length;
	}

	/**
	 * Keys moved by one change of the fleet.
	 *
	 * @param instances N, before the change
	 * @param join {@code true} when an instance joins, {@code false} when one leaves
	 * @param ideal the share of the instance that joins or leaves: 1/(N+1) or 1/N
	 * @param moved keys whose instance changed ÷ all keys
	 * @param movedBetweenStayers keys that moved from an instance that stayed to another
	 * instance that was there before (0 for a consistent ring)
	 * @param minMoved for a leave, the smallest {@code moved} over every instance leaving
	 * in turn; for a join, {@code NaN}
	 * @param maxMoved for a leave, the largest {@code moved} over every instance leaving
	 * in turn; for a join, {@code NaN}
	 */
	public record Movement(int instances, boolean join, double ideal, double moved, int movedBetweenStayers,
			double minMoved, double maxMoved) {
	}

	/**
	 * How evenly one workload spreads.
	 *
	 * @param workload description
	 * @param instances n
	 * @param requests assignments, all held in flight
	 * @param bounded whether bounded load was on (load factor
	 * {@value HashingSimulation#LOAD_FACTOR})
	 * @param maxOverMean the largest per-instance count ÷ the mean, at the end
	 * @param stepsOverBound assignments after which some instance held more than
	 * {@code ceil(1.25 × assigned ÷ n)}
	 * @param hottestKeyShare the most frequent key's share of the requests
	 */
	public record Balance(String workload, int instances, int requests, boolean bounded, double maxOverMean,
			int stepsOverBound, double hottestKeyShare) {
	}

	/**
	 * The simulation's results.
	 *
	 * @param seed the seed
	 * @param movements join / leave runs
	 * @param balances balance runs
	 */
	public record Report(long seed, List<Movement> movements, List<Balance> balances) {

		/**
		 * The results as Markdown tables.
		 * @return the Markdown text
		 */
		public String markdown() {
			StringBuilder out = new StringBuilder();
			out.append(String.format(Locale.ROOT,
					"#### `ring-hash`: keys moved when one instance joins or leaves (%,d random keys, 160 points "
							+ "per instance, seed %d)%n%n",
					KEYS, this.seed));
			out.append("| N | change | ideal | moved | moved between instances that stayed | "
					+ "moved, any one of the N leaving (min – max) |\n|---:|---|---:|---:|---:|---:|\n");
			for (Movement movement : this.movements) {
				out.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %d | %s |%n", movement.instances(),
						movement.join() ? "one joins" : "one leaves", percent(movement.ideal()),
						percent(movement.moved()), movement.movedBetweenStayers(),
						movement.join() ? "—" : percent(movement.minMoved()) + " – " + percent(movement.maxMoved())));
			}
			out.append(String.format(Locale.ROOT,
					"%n#### `ring-hash`: balance over %d instances, every assignment held in flight (seed %d)%n%n",
					BALANCE_INSTANCES, this.seed));
			out.append("| workload | bounded load | max ÷ mean | steps over ceil(1.25 × assigned ÷ n) |\n"
					+ "|---|---|---:|---:|\n");
			for (Balance balance : this.balances) {
				out.append(String.format(Locale.ROOT, "| %s | %s | %.3f | %,d of %,d |%n", balance.workload(),
						balance.bounded() ? "on, load factor " + LOAD_FACTOR : "off", balance.maxOverMean(),
						balance.stepsOverBound(), balance.requests()));
			}
			out.append('\n');
			return out.toString();
		}

		private static String percent(double share) {
			return String.format(Locale.ROOT, "%.2f %%", share * 100);
		}

	}

	/**
	 * A {@code ring-hash} balancer over one fleet, with the caller's statistics on a
	 * clock that never moves.
	 */
	private static final class Ring {

		private final RingHashBalancer balancer;

		private final InstanceSnapshot snapshot;

		private final InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), () -> 0L);

		private final KeyedPickContext context;

		Ring(List<ServiceInstance> fleet, boolean bounded) {
			MeterRegistry meters = new SimpleMeterRegistry();
			InstanceAttributesParser parser = new InstanceAttributesParser(Fixtures.SERVICE_ID, "version", meters);
			this.balancer = new RingHashBalancer(
					new StrategySettings(Fixtures.SERVICE_ID, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters),
					new HashRules(KEY_HEADER, null, HashRules.DEFAULT_VIRTUAL_NODES, bounded, LOAD_FACTOR), () -> {
						throw new IllegalStateException("every request has a key");
					});
			this.snapshot = InstanceSnapshot.of(fleet, parser);
			this.context = new KeyedPickContext(KEY_HEADER, this.snapshot, this.stats);
		}

		/**
		 * The instance of a key.
		 * @param hold whether to count the request in flight, never completed
		 */
		ServiceInstance pick(String key, boolean hold) {
			this.context.key = key;
			ServiceInstance chosen = this.snapshot.get(this.balancer.choose(this.snapshot, this.context));
			if (hold) {
				this.stats.started(chosen);
			}
			return chosen;
		}

	}

}
