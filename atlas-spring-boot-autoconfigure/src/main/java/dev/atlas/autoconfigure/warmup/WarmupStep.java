package dev.atlas.autoconfigure.warmup;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.weighting.SlowStart;
import org.jspecify.annotations.Nullable;

/**
 * Atlas's warmup under new rules: {@link SlowStart#withRules} keeps what it has seen of
 * the instances (their ages). An application's bean that replaced Atlas's warmup is kept
 * as it is. Thread-safe.
 *
 * @since 0.1.0
 */
public final class WarmupStep implements RuntimeStep {

	private volatile @Nullable SlowStart current;

	/**
	 * Creates the step.
	 * @param warmup the warmup Atlas built for the service, or {@code null} when there is
	 * none
	 */
	public WarmupStep(@Nullable SlowStart warmup) {
		this.current = warmup;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		SlowStart warmup = this.current;
		if (warmup == null || !change.inForce(warmup) || !change.changed(WarmupSection.SECTION)) {
			return null;
		}
		SlowStart next = warmup.withRules(change.rules(WarmupSection.SECTION));
		return Rebuild.replacing(warmup, () -> {
			this.current = next;
			return next;
		});
	}

}
