package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The strategy of one service under new rules: a new one, created by its registered
 * factory, when the service's {@code loadbalancer} section changes; otherwise the
 * strategy in force is kept with its state. Owns the
 * {@value AtlasLoadBalancerClientConfiguration#PICKS_METER} counter, tagged with the
 * strategy in force. Thread-safe.
 *
 * @since 0.1.0
 */
public final class StrategyStep implements RuntimeStep {

	private final String serviceId;

	private final StrategyRegistry strategies;

	private final InstanceAttributesParser parser;

	private final InstanceStats stats;

	private final MeterRegistry meters;

	private volatile FunctionCounter picks;

	/**
	 * Creates the step and registers the picks counter.
	 * @param serviceId the service
	 * @param strategy the name of the strategy in force
	 * @param strategies creates strategies by name
	 * @param parser the service's parser, given to new strategies
	 * @param stats the service's statistics (read by the picks counter)
	 * @param meters where the counter and the strategies' meters are registered
	 */
	public StrategyStep(String serviceId, String strategy, StrategyRegistry strategies, InstanceAttributesParser parser,
			InstanceStats stats, MeterRegistry meters) {
		this.serviceId = serviceId;
		this.strategies = strategies;
		this.parser = parser;
		this.stats = stats;
		this.meters = meters;
		this.picks = registerPicks(strategy);
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		if (!change.changed(StrategyRules.SECTION)) {
			return null;
		}
		StrategyRules next = change.rules(StrategyRules.SECTION);
		if (next.choosesAs(change.previous().get(StrategyRules.SECTION))) {
			// only the per-instance limit changed: the strategy keeps its state
			return null;
		}
		LoadBalancingStrategy strategy = this.strategies.create(next.strategy(),
				new StrategySettings(this.serviceId, this.parser, next.allZeroWeights(), this.meters));
		String before = change.previous().get(StrategyRules.SECTION).strategy();
		return Rebuild.strategy(change.inForce().strategy(), next.strategy(), () -> {
			if (!next.strategy().equals(before)) {
				this.meters.remove(this.picks);
				this.picks = registerPicks(next.strategy());
			}
			return strategy;
		});
	}

	/**
	 * The picks counter, read when scraped from the per-instance request counts (a pick
	 * itself writes no shared counter).
	 */
	private FunctionCounter registerPicks(String strategy) {
		return FunctionCounter
			.builder(AtlasLoadBalancerClientConfiguration.PICKS_METER, this.stats, InstanceStats::totalRequests)
			.description("Requests sent to instances chosen by Atlas (each attempt counts)")
			.tag("service", this.serviceId)
			.tag("strategy", strategy)
			.register(this.meters);
	}

}
