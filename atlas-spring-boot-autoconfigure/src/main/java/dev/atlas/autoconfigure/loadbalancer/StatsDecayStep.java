package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.stats.FailureStatuses;
import dev.atlas.loadbalancer.stats.InstanceStats;
import org.jspecify.annotations.Nullable;

/**
 * The decay time and the failure statuses of a service's live statistics under new rules
 * ({@code loadbalancer.peak-ewma.decay-time}, {@code loadbalancer.failure-statuses},
 * whichever strategy is in use): set in place, keeping the statistics. Thread-safe.
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
		StrategyRules next = change.rules(StrategyRules.SECTION);
		StrategyRules previous = change.previous().get(StrategyRules.SECTION);
		Duration decayTime = next.peakEwma().decayTime();
		FailureStatuses failureStatuses = next.failureStatuses();
		if (decayTime.equals(previous.peakEwma().decayTime()) && failureStatuses.equals(previous.failureStatuses())) {
			return null;
		}
		return Rebuild.state(() -> {
			this.stats.decayTime(decayTime);
			this.stats.failureStatuses(failureStatuses);
		});
	}

}
