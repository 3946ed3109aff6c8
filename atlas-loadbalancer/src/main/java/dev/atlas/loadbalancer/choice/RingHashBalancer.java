package dev.atlas.loadbalancer.choice;

import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.Counter;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@value #NAME} strategy: consistent hashing of a request key (a header, else a
 * cookie; {@link HashRules}) onto a {@link HashRing} built once per snapshot, so that the
 * same key reaches the same instance while the set is stable and only about 1/N of the
 * keys move when one of N instances joins or leaves (sticky routing for warm caches, as
 * Envoy's ring hash and Dubbo's consistent hash). Points per instance follow effective
 * weights (warmup included); instances of weight 0 get none.
 *
 * <p>
 * With {@link HashRules#boundedLoad() bounded load} (Mirrokni, Thorup and Zadimoghaddam,
 * "Consistent Hashing with Bounded Loads", SODA 2018), an instance whose in-flight
 * requests reach {@code ceil(loadFactor × (in-flight of all candidates + 1) × weight ÷
 * Σweight)} is passed over for the next instance clockwise, so a hot key cannot overload
 * one instance. In-flight requests are this caller's own; for more than
 * {@value #EXACT_TOTAL_UP_TO} candidates their total is estimated from
 * {@value #EXACT_TOTAL_UP_TO} evenly spaced ones, so the bound costs O(1), not O(n)
 * (Envoy sums every host), and holds within that estimate's error. An instance with
 * nothing in flight is never passed over.
 *
 * <p>
 * A request without a key is balanced by weighted random, counted in
 * {@value #MISSING_KEY_METER} and logged once at DEBUG. Lookup is O(log p) for p points;
 * a pick allocates nothing (the key is hashed in place). Thread-safe and lock-free.
 */
public final class RingHashBalancer extends SnapshotBalancer<RingHashBalancer.Table> {

	private static final Logger log = LoggerFactory.getLogger(RingHashBalancer.class);

	/** The name of this strategy in properties. */
	public static final String NAME = "ring-hash";

	/** Counter of requests without a hash key; tag {@code service}. */
	public static final String MISSING_KEY_METER = "atlas.hash.key.missing";

	/** Candidates up to which bounded load sums every in-flight count. */
	static final int EXACT_TOTAL_UP_TO = 64;

	private final HashRules rules;

	private final Supplier<? extends RandomGenerator> random;

	private final Counter missingKey;

	private volatile boolean missingKeyLogged;

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
		return new StrategyFactory() {

			@Override
			public String name() {
				return NAME;
			}

			@Override
			public RingHashBalancer create(StrategySettings settings) {
				return new RingHashBalancer(settings, rules.apply(settings.serviceId()));
			}

		};
	}

	@Override
	protected Table buildTable(InstanceSnapshot candidates, double[] weights) {
		InstanceKey[] keys = new InstanceKey[candidates.size()];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = candidates.key(i);
		}
		return new Table(HashRing.of(keys, weights, this.rules.virtualNodes()), new Draws(weights));
	}

	@Override
	protected int pick(Table table) {
		return table.draws.draw(this.random.get());
	}

	@Override
	protected int pick(Table table, PickContext context) {
		long hash = keyHash(context);
		if (hash == NO_KEY) {
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
		int position = ring.positionAt(index);
		if (!this.rules.boundedLoad()) {
			return position;
		}
		int load = context.inFlight(position);
		if (load == 0) {
			return position;
		}
		double perWeight = this.rules.loadFactor() * (table.totalInFlight(context) + 1) / table.totalWeight;
		double[] weights = table.draws.weights;
		for (int step = 0; step < ring.size(); step++) {
			int candidate = (step == 0) ? position : ring.positionAt(index + step);
			int inFlight = (step == 0) ? load : context.inFlight(candidate);
			if (inFlight < Math.ceil(perWeight * weights[candidate])) {
				return candidate;
			}
		}
		return position;
	}

	/** A hash that marks "no key" (a real key hashing to it is taken as keyless). */
	private static final long NO_KEY = Long.MIN_VALUE;

	private long keyHash(PickContext context) {
		String header = this.rules.header();
		if (header != null) {
			String value = context.header(header);
			if (value != null) {
				return HashRing.hash(value, 0, value.length());
			}
		}
		String cookie = this.rules.cookie();
		if (cookie != null) {
			String cookies = context.header("cookie");
			if (cookies != null) {
				return cookieHash(cookies, cookie);
			}
		}
		return NO_KEY;
	}

	/**
	 * The hash of a cookie's value in a {@code Cookie} header ({@code a=1; b=2}), found
	 * in place; {@link #NO_KEY} when absent or empty.
	 */
	static long cookieHash(String cookies, String name) {
		int length = cookies.length();
		int start = 0;
		while (start < length) {
			while (start < length && (cookies.charAt(start) == ' ' || cookies.charAt(start) == ';')) {
				start++;
			}
			int end = cookies.indexOf(';', start);
			if (end < 0) {
				end = length;
			}
			int equals = start + name.length();
			if (equals < end && cookies.charAt(equals) == '=' && cookies.regionMatches(start, name, 0, name.length())) {
				int from = equals + 1;
				int to = end;
				while (to > from && cookies.charAt(to - 1) == ' ') {
					to--;
				}
				if (to - from >= 2 && cookies.charAt(from) == '"' && cookies.charAt(to - 1) == '"') {
					from++;
					to--;
				}
				return (to > from) ? HashRing.hash(cookies, from, to) : NO_KEY;
			}
			start = end + 1;
		}
		return NO_KEY;
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
	 * What a snapshot's picks need: its ring, its draws (requests without a key), and
	 * what bounded load sums.
	 */
	static final class Table {

		final HashRing ring;

		final Draws draws;

		final double totalWeight;

		/** Positions whose in-flight requests are summed. */
		private final int[] sampled;

		/** Σweight ÷ Σweight of {@link #sampled}: scales the sampled sum to the whole. */
		private final double scale;

		Table(HashRing ring, Draws draws) {
			this.ring = ring;
			this.draws = draws;
			double[] weights = draws.weights;
			double total = 0;
			for (double weight : weights) {
				total += weight;
			}
			this.totalWeight = total;
			int count = Math.min(weights.length, EXACT_TOTAL_UP_TO);
			this.sampled = new int[count];
			double sampledWeight = 0;
			for (int i = 0; i < count; i++) {
				this.sampled[i] = (int) ((long) i * weights.length / count);
				sampledWeight += weights[this.sampled[i]];
			}
			this.scale = (sampledWeight > 0) ? total / sampledWeight : 1;
		}

		double totalInFlight(PickContext context) {
			long sum = 0;
			for (int position : this.sampled) {
				sum += context.inFlight(position);
			}
			return sum * this.scale;
		}

		@Override
		public String toString() {
			return "ring of " + this.ring.size() + " points";
		}

	}

}
