package dev.atlas.loadbalancer.choice;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.Counter;
import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@value #NAME} strategy: consistent hashing of a request key (a header, else a
 * cookie; {@link HashRules}; read and hashed by {@link PickContext#keyHash}) onto a
 * {@link HashRing} built once per instance set, so that the same key reaches the same
 * instance while the set is stable and only about 1/N of the keys move when one of N
 * instances joins or leaves (sticky routing for warm caches, as Envoy's ring hash and
 * Dubbo's consistent hash).
 *
 * <p>
 * Points per instance follow configured weights; instances of weight 0 get none. The ring
 * depends only on the instances and their configured weights, so it is built once per
 * instance set and reused by every snapshot of that set (up to {@value #CACHED_POINTS}
 * points of rings are kept), not rebuilt on each warmup tick. Effective weights below the
 * configured ones (warmup, or a weight adjuster of the application) apply per key: a key
 * that lands on an instance at a fraction f of its weight (relative to the least reduced
 * instance, so that a fleet warming up as a whole keeps its keys) stays there when a
 * number in [0, 1) derived from the key and that instance is below f, and otherwise goes
 * on clockwise, where it would go without that instance. So a warming instance takes a
 * growing share of exactly the keys it will own once warm (about f of them), and no key
 * moves between instances whose weights do not change.
 *
 * <p>
 * With {@link HashRules#boundedLoad() bounded load} ({@link BoundedLoad}: Mirrokni,
 * Thorup and Zadimoghaddam), an instance at its bound of in-flight requests is passed
 * over for the next instance clockwise, so a hot key cannot overload one instance.
 *
 * <p>
 * A request without a key is balanced by weighted random, counted in
 * {@value #MISSING_KEY_METER} and logged once at DEBUG. Lookup is O(1) expected (see
 * {@link HashRing}); a pick allocates nothing (the key is hashed in place). Thread-safe
 * and lock-free.
 *
 * @since 0.1.0
 */
public final class RingHashBalancer extends SnapshotBalancer<RingHashBalancer.Table> {

	/** The name of this strategy in properties. */
	public static final String NAME = "ring-hash";

	/** Counter of requests without a hash key; tag {@code service}. */
	public static final String MISSING_KEY_METER = "atlas.hash.key.missing";

	/**
	 * Points of the rings kept for reuse, in all (with their bucket index, about 48 MB).
	 */
	static final int CACHED_POINTS = 1 << 22;

	private static final Logger log = LoggerFactory.getLogger(RingHashBalancer.class);

	private static final LongHashFunction MIX = LongHashFunction.xx3(0x5DEECE66DL);

	private final HashRules rules;

	/** The bound, when the rules ask for bounded load. */
	private final BoundedLoad boundedLoad;

	private final Supplier<? extends RandomGenerator> random;

	private final Counter missingKey;

	private volatile boolean missingKeyLogged;

	/** Rings by instance set and configured weights. */
	private final Cache<RingKey, HashRing> rings = Caffeine.newBuilder()
		.maximumWeight(CACHED_POINTS)
		.weigher((RingKey key, HashRing ring) -> ring.weight())
		.build();

	/**
	 * Creates a balancer whose requests without a key draw from
	 * {@link ThreadLocalRandom}.
	 * @param settings the service and its settings
	 * @param rules key source, points and bounded load
	 */
	public RingHashBalancer(StrategySettings settings, HashRules rules) {
		this(settings, rules, ThreadLocalRandom::current);
	}

	/**
	 * Creates a balancer with a chosen source of randomness for requests without a key.
	 * @param settings the service and its settings
	 * @param rules key source, points and bounded load
	 * @param random called once per pick without a key, on the picking thread
	 */
	public RingHashBalancer(StrategySettings settings, HashRules rules, Supplier<? extends RandomGenerator> random) {
		super(settings);
		this.rules = Objects.requireNonNull(rules, "rules");
		this.boundedLoad = new BoundedLoad(rules.loadFactor());
		this.random = Objects.requireNonNull(random, "random");
		this.missingKey = Counter.builder(MISSING_KEY_METER)
			.description("Requests to a ring-hash service without a hash key, balanced by weighted random")
			.tag("service", settings.serviceId())
			.register(settings.meterRegistry());
	}

	/**
	 * Registers this strategy under {@value #NAME}.
	 * @param rules the rules of a service, by service id; called once per service
	 * @return the factory
	 */
	public static StrategyFactory factory(Function<String, HashRules> rules) {
		Objects.requireNonNull(rules, "rules");
		return StrategyFactory.of(NAME,
				(settings) -> new RingHashBalancer(settings, rules.apply(settings.serviceId())));
	}

	@Override
	protected Table buildTable(InstanceSnapshot candidates, double[] weights) {
		int size = candidates.size();
		// The ring is over the instances in a canonical order (by id, host, port), so
		// that every snapshot of the same instances, in any order, shares it.
		Integer[] order = new Integer[size];
		for (int i = 0; i < size; i++) {
			order[i] = i;
		}
		Arrays.sort(order, (a, b) -> InstanceKey.ORDER.compare(candidates.key(a), candidates.key(b)));
		InstanceKey[] keys = new InstanceKey[size];
		double[] ringWeights = new double[size];
		int[] positions = new int[size];
		double[] factors = new double[size];
		// Under all-zero fail-open, the weights given are the policy's equal ones.
		boolean policyWeights = candidates.totalEffectiveWeight() == 0;
		double largest = 0;
		for (int canonical = 0; canonical < size; canonical++) {
			int position = order[canonical];
			keys[canonical] = candidates.key(position);
			double configured = candidates.attributes(position).weight();
			double ringWeight = (configured > 0 && !policyWeights) ? configured : weights[position];
			ringWeights[canonical] = ringWeight;
			positions[canonical] = position;
			factors[position] = (ringWeight > 0) ? Math.min(1, weights[position] / ringWeight) : 0;
			largest = Math.max(largest, factors[position]);
		}
		if (largest > 0 && largest < 1) {
			// Relative to the least reduced instance: a fleet warming up as a whole keeps
			// its keys where they are, and every walk ends at the latest there.
			for (int position = 0; position < size; position++) {
				factors[position] /= largest;
			}
		}
		HashRing ring = this.rings.get(new RingKey(keys, ringWeights),
				(key) -> HashRing.of(key.keys, key.weights, this.rules.virtualNodes()));
		long[] bases = new long[size];
		for (int canonical = 0; canonical < size; canonical++) {
			bases[positions[canonical]] = ring.base(canonical);
		}
		return new Table(ring, positions, factors, bases, new Draws(weights));
	}

	@Override
	protected int pick(Table table) {
		return table.draws.draw(this.random.get());
	}

	@Override
	protected int pick(Table table, PickContext context) {
		long hash = context.keyHash(this.rules.header(), this.rules.cookie());
		if (hash == PickContext.NO_KEY) {
			this.missingKey.increment();
			if (!this.missingKeyLogged) {
				this.missingKeyLogged = true;
				log.debug("A request to service '{}' has no hash key ({}); balanced by weighted random; "
						+ "counted in {} (logged once)", serviceId(), describeKeySource(), MISSING_KEY_METER);
			}
			return pick(table);
		}
		HashRing ring = table.ring;
		int index = ring.indexOf(hash);
		int first = table.positionAt(index);
		boolean bounded = this.rules.boundedLoad();
		boolean failures = bounded && context.anyFailing();
		if (table.factors[first] >= 1 && (!bounded || FailurePenalty.load(context, first, failures) == 0)) {
			return first;
		}
		double perWeight = -1;
		double[] weights = table.draws.weights;
		int accepted = -1;
		for (int step = 0; step < ring.size(); step++) {
			int candidate = (step == 0) ? first : table.positionAt(index + step);
			double factor = table.factors[candidate];
			if (factor < 1 && uniform(hash, table.bases[candidate]) >= factor) {
				continue;
			}
			if (!bounded) {
				return candidate;
			}
			if (accepted < 0) {
				accepted = candidate;
			}
			double load = FailurePenalty.load(context, candidate, failures);
			if (load == 0) {
				return candidate;
			}
			if (perWeight < 0) {
				perWeight = this.boundedLoad.perWeight(context, table.factors.length, table.totalWeight);
			}
			if (BoundedLoad.accepts(load, perWeight, weights[candidate])) {
				return candidate;
			}
		}
		// Every instance at its bound (in-flight counts moved meanwhile): the key's own,
		// never one the key was passed over from.
		return (accepted >= 0) ? accepted : first;
	}

	/**
	 * A number in [0, 1) fixed for a key and an instance (by its host and port), so that
	 * whether a key stays on a warming instance depends on nothing else.
	 */
	private static double uniform(long keyHash, long instanceBase) {
		return (MIX.hashLong(keyHash ^ instanceBase) >>> 11) * 0x1.0p-53;
	}

	private String describeKeySource() {
		String header = this.rules.header();
		String cookie = this.rules.cookie();
		if (header == null && cookie == null) {
			return "no atlas.loadbalancer.hash.header or .cookie is configured";
		}
		return ((header != null) ? "header " + header : "") + ((header != null && cookie != null) ? ", " : "")
				+ ((cookie != null) ? "cookie " + cookie : "") + " absent";
	}

	/**
	 * Number of rings kept for reuse (tests).
	 * @return {@code >= 0}
	 */
	long ringsKept() {
		this.rings.cleanUp();
		return this.rings.estimatedSize();
	}

	/**
	 * The rules in force.
	 * @return the rules
	 */
	public HashRules rules() {
		return this.rules;
	}

	@Override
	public String name() {
		return NAME;
	}

	/**
	 * What a snapshot's picks need: the ring of its instance set, where each ring index
	 * is in the snapshot, each instance's fraction of its configured weight, its draws
	 * (requests without a key), and the total weight bounded load divides by.
	 */
	static final class Table {

		final HashRing ring;

		/** Effective ÷ ring weight by snapshot position, 0..1. */
		final double[] factors;

		final Draws draws;

		final double totalWeight;

		/** By snapshot position: the instance's ring base (see {@link HashRing#base}). */
		final long[] bases;

		/** Snapshot position by canonical index (the ring's positions). */
		private final int[] positions;

		Table(HashRing ring, int[] positions, double[] factors, long[] bases, Draws draws) {
			this.ring = ring;
			this.positions = positions;
			this.factors = factors;
			this.bases = bases;
			this.draws = draws;
			double total = 0;
			for (double weight : draws.weights) {
				total += weight;
			}
			this.totalWeight = total;
		}

		/** The snapshot position of a ring entry. */
		int positionAt(int index) {
			return this.positions[this.ring.positionAt(index)];
		}

		@Override
		public String toString() {
			return "ring of " + this.ring.size() + " points";
		}

	}

	/** An instance set in canonical order with the weights its ring was built for. */
	private static final class RingKey {

		final InstanceKey[] keys;

		final double[] weights;

		private final int hash;

		RingKey(InstanceKey[] keys, double[] weights) {
			this.keys = keys;
			this.weights = weights;
			this.hash = 31 * Arrays.hashCode(keys) + Arrays.hashCode(weights);
		}

		@Override
		public boolean equals(@Nullable Object other) {
			return this == other || (other instanceof RingKey key && this.hash == key.hash
					&& Arrays.equals(this.keys, key.keys) && Arrays.equals(this.weights, key.weights));
		}

		@Override
		public int hashCode() {
			return this.hash;
		}

	}

}
