package dev.atlas.autoconfigure.loadbalancer;

import java.util.Objects;

import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.orca.WeightRules;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.stats.FailureStatuses;

/**
 * The choice rules of one service, section {@code loadbalancer}: which strategy, what to
 * do when every weight is 0, and the rules of Atlas's built-in strategies. Immutable.
 *
 * @param strategy name of the load-balancing strategy, normalized (kebab-case,
 * lower-case, e.g. {@code weighted-random}); not checked against the registered
 * strategies
 * @param allZeroWeights what to do when every candidate has weight 0
 * @param leastRequest the rules of {@code least-request} (whichever strategy is in use)
 * @param peakEwma the rules of {@code peak-ewma}; its decay time applies to the service's
 * statistics whichever strategy is in use
 * @param hash the rules of {@code ring-hash}
 * @param weightedRoundRobin the rules of {@code weighted-round-robin} (how reported load
 * becomes weights)
 * @param failureStatuses the statuses of an answer that count as a failure of the
 * instance in the service's statistics (whichever strategy is in use)
 * @param maxInFlightPerInstance requests this caller may have in flight to one instance,
 * {@code >= 1}, or {@code 0} for no limit (whichever strategy is in use)
 * @since 0.1.0
 */
public record StrategyRules(String strategy, AllZeroWeightsPolicy allZeroWeights, LeastRequestRules leastRequest,
		PeakEwmaRules peakEwma, HashRules hash, WeightRules weightedRoundRobin, FailureStatuses failureStatuses,
		int maxInFlightPerInstance) {

	/**
	 * The section {@code atlas.loadbalancer}, overlaid by
	 * {@code atlas.services.<service-id>.loadbalancer}; shown flat in a service's view
	 * ({@code strategy}, {@code all-zero-weights}, {@code least-request}, ...).
	 */
	public static final Section<LoadBalancerProperties, StrategyRules> SECTION = Section
		.of("loadbalancer", LoadBalancerProperties::new, (properties, context) -> {
			String prefix = context.propertyName("loadbalancer");
			return new StrategyRules(properties.getStrategy(), properties.getAllZeroWeights(),
					properties.leastRequestRules(prefix), properties.peakEwmaRules(prefix),
					properties.hashRules(prefix), properties.weightedRoundRobinRules(prefix),
					properties.failureStatuses(prefix), properties.maxInFlightPerInstance(prefix));
		})
		.flatView();

	/**
	 * Checks that nothing is missing.
	 * @throws NullPointerException if a component is {@code null}
	 */
	public StrategyRules {
		Objects.requireNonNull(strategy, "strategy");
		Objects.requireNonNull(allZeroWeights, "allZeroWeights");
		Objects.requireNonNull(leastRequest, "leastRequest");
		Objects.requireNonNull(peakEwma, "peakEwma");
		Objects.requireNonNull(hash, "hash");
		Objects.requireNonNull(weightedRoundRobin, "weightedRoundRobin");
		Objects.requireNonNull(failureStatuses, "failureStatuses");
	}

	/**
	 * Whether these rules choose as others do: the same but for the per-instance limit,
	 * which the load balancer reads apart from the strategy.
	 * @param other other rules
	 * @return {@code true} when only the limit may differ
	 */
	public boolean choosesAs(StrategyRules other) {
		return equals(new StrategyRules(other.strategy, other.allZeroWeights, other.leastRequest, other.peakEwma,
				other.hash, other.weightedRoundRobin, other.failureStatuses, this.maxInFlightPerInstance));
	}

}
