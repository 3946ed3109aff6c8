package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import org.jspecify.annotations.Nullable;

/**
 * The per-instance in-flight limit under new rules
 * ({@code atlas.loadbalancer.max-in-flight-per-instance}, overlaid per service): the
 * service's limit takes the new value in place, for the next pick; requests in flight
 * stay. Thread-safe.
 *
 * @since 0.1.0
 */
public final class InFlightLimitStep implements RuntimeStep {

	private final InFlightLimit limit;

	/**
	 * Creates the step.
	 * @param limit the service's limit
	 */
	public InFlightLimitStep(InFlightLimit limit) {
		this.limit = limit;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		if (!change.changed(StrategyRules.SECTION)) {
			return null;
		}
		int max = change.rules(StrategyRules.SECTION).maxInFlightPerInstance();
		if (max == this.limit.max()) {
			return null;
		}
		return Rebuild.state(() -> this.limit.update(max));
	}

}
