package dev.atlas.autoconfigure.overload;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.overload.RetryBudget;
import org.jspecify.annotations.Nullable;

/**
 * The retry budget under new rules: the service's budget takes them in place, keeping the
 * counts of its window ({@link RetryBudget#update}). Adds the budget's state to the view
 * of the service's rules ({@code /actuator/atlas/{service}}): its balance (retries
 * allowed now), and the requests and retries of its window. Thread-safe.
 *
 * @since 0.1.0
 */
public final class RetryBudgetStep implements RuntimeStep {

	private final RetryBudget budget;

	/**
	 * Creates the step.
	 * @param budget the service's budget
	 */
	public RetryBudgetStep(RetryBudget budget) {
		this.budget = budget;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		if (!change.changed(RetrySection.SECTION)) {
			return null;
		}
		return Rebuild.state(() -> this.budget.update(change.rules(RetrySection.SECTION)));
	}

}
