package dev.atlas.loadbalancer.choice;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * The {@value #NAME} strategy: smooth weighted round robin as in nginx
 * ({@code ngx_http_upstream_get_peer}): weights 5, 1, 1 give {@code a a b a c a a}; every
 * Σw consecutive picks contain each instance exactly w times. The sequence is precomputed
 * once per snapshot ({@link SmoothWeightedRoundRobinSequence}) and walked by one
 * {@link AtomicLong} shared by all callers, so concurrent picks are lock-free and still
 * follow the exact sequence, whichever thread takes them.
 *
 * <p>
 * The position survives snapshot changes (it is not reset to 0), so a refresh does not
 * make every caller start the new sequence on the same instance. Thread-safe.
 */
public final class SmoothWeightedRoundRobinBalancer extends SnapshotBalancer<SmoothWeightedRoundRobinSequence> {

	/** The name of this strategy in properties. */
	public static final String NAME = "smooth-round-robin";

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

	private final AtomicLong position;

	/**
	 * Creates a balancer starting at a random position in {@code [0, 1000)}, as Spring's
	 * {@code RoundRobinLoadBalancer} does, so that callers started together do not move
	 * in lockstep.
	 * @param settings the service and its settings
	 */
	public SmoothWeightedRoundRobinBalancer(StrategySettings settings) {
		this(settings, ThreadLocalRandom.current().nextInt(1000));
	}

	/**
	 * Creates a balancer starting at a chosen position ({@code 0} reproduces nginx from
	 * its first pick).
	 * @param settings the service and its settings
	 * @param initialPosition the position of the first pick, {@code >= 0}
	 */
	public SmoothWeightedRoundRobinBalancer(StrategySettings settings, long initialPosition) {
		super(settings);
		this.position = new AtomicLong(initialPosition);
	}

	@Override
	protected SmoothWeightedRoundRobinSequence buildTable(double[] weights) {
		return SmoothWeightedRoundRobinSequence.of(weights);
	}

	@Override
	protected int pick(SmoothWeightedRoundRobinSequence table) {
		return table.at(this.position.getAndIncrement());
	}

	@Override
	public String name() {
		return NAME;
	}

}
