package dev.atlas.loadbalancer.choice;

import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * The {@value #NAME} strategy: picks each instance with probability weight / Σweight, in
 * O(1) per pick from an {@link AliasTable} (Vose's alias method) built once per snapshot.
 * Stateless between picks, so callers never synchronize on each other. Atlas's default.
 * Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class WeightedRandomBalancer extends SnapshotBalancer<AliasTable> {

	/** The name of this strategy in properties. */
	public static final String NAME = "weighted-random";

	/**
	 * Registers this strategy under {@value #NAME}, drawing from
	 * {@link ThreadLocalRandom}.
	 */
	public static final StrategyFactory FACTORY = new StrategyFactory() {

		@Override
		public String name() {
			return NAME;
		}

		@Override
		public WeightedRandomBalancer create(StrategySettings settings) {
			return new WeightedRandomBalancer(settings);
		}

	};

	private final Supplier<? extends RandomGenerator> random;

	/**
	 * Creates a balancer drawing from {@link ThreadLocalRandom}.
	 * @param settings the service and its settings
	 */
	public WeightedRandomBalancer(StrategySettings settings) {
		this(settings, ThreadLocalRandom::current);
	}

	/**
	 * Creates a balancer with a chosen source of randomness, e.g. a seeded one in tests.
	 * @param settings the service and its settings
	 * @param random called once per pick, on the picking thread; what it returns must be
	 * safe to use from that thread (a seeded {@link java.util.SplittableRandom} is fine
	 * for single-threaded tests)
	 */
	public WeightedRandomBalancer(StrategySettings settings, Supplier<? extends RandomGenerator> random) {
		super(settings);
		this.random = Objects.requireNonNull(random, "random");
	}

	@Override
	protected AliasTable buildTable(InstanceSnapshot candidates, double[] weights) {
		return AliasTable.of(weights);
	}

	@Override
	protected int pick(AliasTable table) {
		return table.sample(this.random.get());
	}

	@Override
	public String name() {
		return NAME;
	}

}
