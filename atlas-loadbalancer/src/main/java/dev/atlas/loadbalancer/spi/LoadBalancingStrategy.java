package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;

/**
 * An extension point of Atlas's pipeline: chooses one instance among the candidates the
 * filters left. Created per service by a {@link StrategyFactory} registered under a name,
 * which {@code atlas.loadbalancer.strategy} (or
 * {@code atlas.services.<service-id>.loadbalancer.strategy}) selects.
 *
 * <p>
 * A strategy may keep state per service (its own fields) or per candidate set (memoized
 * on the candidate snapshot with {@link InstanceSnapshot#derive}: each gray lane, each
 * retry set is its own snapshot). State memoized on a snapshot ends with it; state that
 * must survive refreshes is best keyed by
 * {@link dev.atlas.loadbalancer.instance.CandidateSet#of CandidateSet.of(candidates)},
 * resolved once per snapshot, in a bounded map. Implementations must be thread-safe, take
 * no lock and should not allocate per pick.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface LoadBalancingStrategy {

	/**
	 * Chooses a position among the candidates.
	 * @param candidates what the filters left, possibly empty; effective weights are
	 * finite and {@code >= 0} (weight 0 = drained)
	 * @param context the request and live per-instance statistics, by position in
	 * {@code candidates}
	 * @return {@code 0 <= index < candidates.size()}, or {@code -1} when there is none to
	 * choose (the caller then gets an empty response: no instance available)
	 */
	int choose(InstanceSnapshot candidates, PickContext context);

	/**
	 * A name for this strategy in messages. The name a strategy is selected by is its
	 * {@link StrategyFactory#name() factory's}; Atlas's own strategies return the same.
	 * @return e.g. {@code weighted-random}; the default is the class's name
	 */
	default String name() {
		return getClass().getName();
	}

}
