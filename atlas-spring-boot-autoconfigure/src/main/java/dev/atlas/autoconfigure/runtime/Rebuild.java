package dev.atlas.autoconfigure.runtime;

import java.util.Objects;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import org.jspecify.annotations.Nullable;

/**
 * A change of one {@link RuntimeStep} prepared under new rules (phase one), waiting to be
 * committed (phase two). Immutable; {@link #commit()} is called at most once.
 *
 * @since 0.1.0
 */
public final class Rebuild {

	private final @Nullable Object replaced;

	private final Supplier<?> commit;

	private final @Nullable String strategyName;

	private Rebuild(@Nullable Object replaced, Supplier<?> commit, @Nullable String strategyName) {
		this.replaced = replaced;
		this.commit = commit;
		this.strategyName = strategyName;
	}

	/**
	 * A new step in place of one of the version in force (a weight adjuster or a
	 * candidate filter).
	 * @param replaced the step of the version in force
	 * @param commit phase two: applies what must change beside the step and gives its
	 * replacement (of the same kind); must not throw
	 * @param <T> the step's type
	 * @return the rebuild
	 */
	public static <T> Rebuild replacing(T replaced, Supplier<? extends T> commit) {
		return new Rebuild(Objects.requireNonNull(replaced, "replaced"), commit, null);
	}

	/**
	 * A new strategy in place of the version's.
	 * @param replaced the strategy of the version in force
	 * @param name the name of the new one
	 * @param commit phase two: gives the new strategy; must not throw
	 * @return the rebuild
	 */
	public static Rebuild strategy(LoadBalancingStrategy replaced, String name,
			Supplier<? extends LoadBalancingStrategy> commit) {
		return new Rebuild(Objects.requireNonNull(replaced, "replaced"), commit, Objects.requireNonNull(name, "name"));
	}

	/**
	 * A change of state kept outside the pipeline only (no step replaced).
	 * @param commit phase two; must not throw
	 * @return the rebuild
	 */
	public static Rebuild state(Runnable commit) {
		Objects.requireNonNull(commit, "commit");
		return new Rebuild(null, () -> {
			commit.run();
			return null;
		}, null);
	}

	/**
	 * The step of the version in force this replaces.
	 * @return {@code null} when no step is replaced
	 */
	public @Nullable Object replaced() {
		return this.replaced;
	}

	/**
	 * The name of the new strategy when this replaces the strategy.
	 * @return {@code null} otherwise
	 */
	public @Nullable String strategyName() {
		return this.strategyName;
	}

	/**
	 * Phase two.
	 * @return the replacement of {@link #replaced()}, or {@code null} when none
	 */
	public @Nullable Object commit() {
		return this.commit.get();
	}

}
