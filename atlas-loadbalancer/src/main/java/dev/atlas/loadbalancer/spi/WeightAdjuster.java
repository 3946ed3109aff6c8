package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;

/**
 * An extension point of Atlas's pipeline: changes the effective weights of a service's
 * instances before any request-dependent narrowing (warmup; an ejection penalty, a
 * latency factor). Adjusters run in order (Spring's {@code Ordered} / {@code @Order}),
 * each on what the previous one returned, before every {@link CandidateFilter}.
 *
 * <p>
 * An adjuster does not see the request: its work is per snapshot and must be memoized on
 * it ({@link InstanceSnapshot#derive}), recomputed at most on a clock tick, never per
 * request. Implementations must be thread-safe and must not block.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface WeightAdjuster {

	/** Order of warmup (slow start). */
	int WARMUP_ORDER = 1000;

	/**
	 * The candidates with adjusted effective weights.
	 * @param candidates the service's instances, never empty
	 * @return {@code candidates} itself when nothing changes, else
	 * {@code candidates.withEffectiveWeights(...)} (the same instances in the same
	 * order); the same object for the same input while the adjustment does not change
	 */
	InstanceSnapshot adjust(InstanceSnapshot candidates);

}
