package dev.atlas.autoconfigure.outlier;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.outlier.ProbeRules;
import dev.atlas.loadbalancer.outlier.Probes;
import dev.atlas.loadbalancer.support.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The connect check of stale lists under new rules: the last-known-good guard gets a new
 * check when the outlier probe's timeout or interval changes, keeping the list it holds.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class StaleCheckStep implements RuntimeStep {

	private final @Nullable LastKnownGood lastKnownGood;

	private final Scheduler scheduler;

	/**
	 * Creates the step.
	 * @param lastKnownGood the service's guard, or {@code null} when there is none
	 * @param scheduler runs the checks
	 */
	public StaleCheckStep(@Nullable LastKnownGood lastKnownGood, Scheduler scheduler) {
		this.lastKnownGood = lastKnownGood;
		this.scheduler = scheduler;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		LastKnownGood guard = this.lastKnownGood;
		ProbeRules next = change.rules(OutlierSection.SECTION).probe();
		ProbeRules previous = change.previous().get(OutlierSection.SECTION).probe();
		if (guard == null
				|| (next.timeout().equals(previous.timeout()) && next.interval().equals(previous.interval()))) {
			return null;
		}
		LastKnownGood.StaleCheck check = new LastKnownGood.StaleCheck(Probes.tcp(next.timeout()), this.scheduler,
				next.interval());
		return Rebuild.state(() -> guard.staleCheck(check));
	}

}
