package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.stats.InstanceStats;
import org.jspecify.annotations.Nullable;

/**
 * The decay time of a service's live statistics under new rules
 * ({@code loadbalancer.peak-ewma.decay-time}, whichever strategy is in use): set in
 * place, keeping the statistics. Thread-safe.
 *
 * @since 0.1.0
 */
public final class StatsDecayStep implements RuntimeStep {

	private final InstanceStats stats;

	/**
	 * Creates the step.
	 * @param stats the service's statistics
	 */
	public StatsDecayStep(InstanceStats stats) {
		this.stats = stats;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		Duration next = change.rules(StrategyRules.SECTION).peakEwma().decayTime();
		if (next.equals(change.previous().get(StrategyRules.SECTION).peakEwma().decayTime())) {
			return null;
		}
		return Rebuild.state(() -> this.stats.decayTime(next));
	}

}
