package dev.atlas.loadbalancer.choice;

import java.util.concurrent.atomic.AtomicLong;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@link Strategy#SMOOTH_ROUND_ROBIN}: smooth weighted round robin as in nginx,
 * precomputed once per snapshot ({@link SmoothWeightedRoundRobinSequence}) and walked by
 * one {@link AtomicLong} shared by all callers, so concurrent picks are lock-free and
 * still follow the exact sequence: any Σw consecutive positions hold each instance
 * exactly w times, whichever thread takes them.
 *
 * <p>
 * The position survives snapshot changes (it is not reset to 0), so a refresh does not
 * make every caller start the new sequence on the same instance. Thread-safe.
 */
public final class SmoothWeightedRoundRobinBalancer extends SnapshotBalancer<SmoothWeightedRoundRobinSequence> {

	private final AtomicLong position;

	/**
	 * Creates a balancer starting at a random position in {@code [0, 1000)}, as Spring's
	 * {@code RoundRobinLoadBalancer} does, so that callers started together do not move
	 * in lockstep.
	 * @param serviceId not {@code null}
	 * @param parser not {@code null}
	 * @param allZeroWeightsPolicy not {@code null}
	 * @param meterRegistry not {@code null}
	 */
	public SmoothWeightedRoundRobinBalancer(String serviceId, InstanceAttributesParser parser,
			AllZeroWeightsPolicy allZeroWeightsPolicy, MeterRegistry meterRegistry) {
		this(serviceId, parser, allZeroWeightsPolicy, meterRegistry,
				java.util.concurrent.ThreadLocalRandom.current().nextInt(1000));
	}

	/**
	 * Creates a balancer starting at a chosen position ({@code 0} reproduces nginx from
	 * its first pick).
	 * @param serviceId not {@code null}
	 * @param parser not {@code null}
	 * @param allZeroWeightsPolicy not {@code null}
	 * @param meterRegistry not {@code null}
	 * @param initialPosition the position of the first pick, {@code >= 0}
	 */
	public SmoothWeightedRoundRobinBalancer(String serviceId, InstanceAttributesParser parser,
			AllZeroWeightsPolicy allZeroWeightsPolicy, MeterRegistry meterRegistry, long initialPosition) {
		super(serviceId, parser, allZeroWeightsPolicy, meterRegistry);
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
	public Strategy strategy() {
		return Strategy.SMOOTH_ROUND_ROBIN;
	}

}
