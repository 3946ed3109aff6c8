package dev.atlas.loadbalancer.choice;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.atlas.loadbalancer.instance.CandidateSet;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * The {@value #NAME} strategy: smooth weighted round robin as in nginx
 * ({@code ngx_http_upstream_get_peer}): weights 5, 1, 1 give {@code a a b a c a a}; every
 * Σw consecutive picks <em>from one candidate set</em> contain each of its instances
 * exactly w times.
 *
 * <p>
 * <strong>One sequence per candidate set.</strong> Each set of candidates a request can
 * meet (each gray lane, each affinity subset, each retry's set without the instance that
 * failed) walks its own position, so requests of different sets that interleave do not
 * take each other's turns: with two lanes of two instances served alternately, each
 * instance still gets a quarter. A set is identified by its instances' identities (id,
 * host and port; {@link CandidateSet}), not by the list object nor by weights, so its
 * position survives refreshes that keep the same instances (a refresh does not make every
 * caller start over on the same instance) and warmup's changes of effective weight (the
 * position is an offset into whichever sequence the current weights give). A new set
 * starts at a random position.
 *
 * <p>
 * <strong>Short-lived sets.</strong> A retry's set (the candidates without the instance
 * that just failed) is {@linkplain InstanceSnapshot#isShortLived() short-lived}: its
 * position is kept on its snapshot only (memoized with {@link InstanceSnapshot#derive},
 * the snapshot itself memoized by retry avoidance per parent snapshot and failed
 * instance), so it lasts as long as the parent snapshot, and the next refresh or warmup
 * tick starts it at a new random position. Remembering retry sets across refreshes would
 * cost memory quadratic in the fleet (n sets of n − 1 instances: about 160,000 entries
 * for 400 instances), and a bounded cache of them would evict the positions of the lanes
 * that first attempts use; a retry's set needs its exact share only among the retries
 * after one failure of one snapshot, which it still gets.
 *
 * <p>
 * Positions are resolved once per snapshot, when its table is built
 * ({@link SmoothWeightedRoundRobinSequence}, precomputed); a pick is one
 * {@code getAndIncrement} of the set's {@link AtomicLong}, shared by all callers, so
 * concurrent picks are lock-free and still follow the exact sequence, whichever thread
 * takes them. The sets remembered across refreshes (all but short-lived ones: one per
 * gray lane, affinity subset or other candidate set first attempts meet, so a few times
 * the fleet in all) are bounded: at most {@value #MAX_REMEMBERED_INSTANCES} instance
 * entries summed over the sets (a Caffeine cache weighed by set size); a set that is
 * evicted, or that disappears and comes back after that, starts at a new random position.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class SmoothWeightedRoundRobinBalancer extends SnapshotBalancer<SmoothWeightedRoundRobinBalancer.Table> {

	/** The name of this strategy in properties. */
	public static final String NAME = "smooth-round-robin";

	/**
	 * Bound of the positions remembered across refreshes, as the sum of the sizes of the
	 * candidate sets they belong to (short-lived retry sets do not count: they are never
	 * remembered there). Each entry keeps alive a {@link CandidateSet} (an array of one
	 * reference per instance) and an {@link AtomicLong}, and through the set the
	 * {@link dev.atlas.loadbalancer.instance.InstanceKey InstanceKey}s of its instances
	 * (id and host strings), which are shared with the current snapshots while those
	 * instances are registered but are kept by the cache after they leave, until their
	 * set is evicted. A fleet of a few thousand instances with a handful of lanes uses a
	 * small part of the bound, well under a megabyte; at the bound, roughly 0.5 MB of
	 * arrays plus the keys of instances that have left (about 100 bytes each with short
	 * ids).
	 */
	public static final long MAX_REMEMBERED_INSTANCES = 100_000;

	/** Registers this strategy under {@value #NAME}, starting at a random position. */
	public static final StrategyFactory FACTORY = new StrategyFactory() {

		@Override
		public String name() {
			return NAME;
		}

		@Override
		public SmoothWeightedRoundRobinBalancer create(StrategySettings settings) {
			return new SmoothWeightedRoundRobinBalancer(settings);
		}

	};

	private final LongSupplier start;

	private final Cache<CandidateSet, AtomicLong> positions;

	/**
	 * Creates a balancer in which each candidate set starts at a random position in
	 * {@code [0, 1000)}, as Spring's {@code RoundRobinLoadBalancer} does, so that callers
	 * started together do not move in lockstep.
	 * @param settings the service and its settings
	 */
	public SmoothWeightedRoundRobinBalancer(StrategySettings settings) {
		this(settings, () -> ThreadLocalRandom.current().nextInt(1000), MAX_REMEMBERED_INSTANCES);
	}

	/**
	 * Creates a balancer in which each candidate set starts at a chosen position
	 * ({@code 0} reproduces nginx from its first pick).
	 * @param settings the service and its settings
	 * @param initialPosition the position of the first pick of every candidate set,
	 * {@code >= 0}
	 */
	public SmoothWeightedRoundRobinBalancer(StrategySettings settings, long initialPosition) {
		this(settings, () -> initialPosition, MAX_REMEMBERED_INSTANCES);
	}

	SmoothWeightedRoundRobinBalancer(StrategySettings settings, LongSupplier start, long maxRememberedInstances) {
		super(settings);
		this.start = start;
		this.positions = Caffeine.newBuilder()
			.maximumWeight(maxRememberedInstances)
			.<CandidateSet, AtomicLong>weigher((set, position) -> Math.max(1, set.size()))
			// Maintenance on the caller, which builds a table (never a pick).
			.executor(Runnable::run)
			.build();
	}

	@Override
	protected Table buildTable(InstanceSnapshot candidates, double[] weights) {
		// Called once per snapshot (the table is memoized on it), so a short-lived set's
		// position lives exactly as long as its snapshot.
		AtomicLong position = candidates.isShortLived() ? new AtomicLong(this.start.getAsLong())
				: this.positions.get(CandidateSet.of(candidates), (set) -> new AtomicLong(this.start.getAsLong()));
		return new Table(SmoothWeightedRoundRobinSequence.of(weights), position);
	}

	@Override
	protected int pick(Table table) {
		return table.sequence.at(table.position.getAndIncrement());
	}

	/**
	 * Number of candidate sets whose position is remembered (tests, diagnostics).
	 * @return {@code >= 0}
	 */
	long rememberedSets() {
		this.positions.cleanUp();
		return this.positions.estimatedSize();
	}

	@Override
	public String name() {
		return NAME;
	}

	/**
	 * One snapshot's table: the sequence of its weights and its candidate set's position.
	 */
	static final class Table {

		final SmoothWeightedRoundRobinSequence sequence;

		final AtomicLong position;

		Table(SmoothWeightedRoundRobinSequence sequence, AtomicLong position) {
			this.sequence = sequence;
			this.position = position;
		}

	}

}
