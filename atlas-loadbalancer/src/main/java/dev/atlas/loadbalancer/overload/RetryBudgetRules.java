package dev.atlas.loadbalancer.overload;

import java.time.Duration;
import java.util.Objects;

/**
 * The rules of a {@link RetryBudget}: over the last {@code window}, retries may be at
 * most {@code ratio} of the requests plus {@code minRetriesPerSecond} for every second of
 * the window. Finagle's and Linkerd's retry budget; the defaults are theirs:
 * <ul>
 * <li>{@code ratio} 0.2: a retry storm adds at most 20 % to the load of a service that is
 * failing, where two layers of three retries each multiply it by up to 16;</li>
 * <li>{@code minRetriesPerSecond} 10: a caller with little traffic (5 requests per
 * second, say) still retries every failure, where 20 % of its requests would allow one
 * retry a second;</li>
 * <li>{@code window} 10 s: long enough to smooth bursts, short enough that a budget spent
 * in an outage is available again ten seconds after it ended.</li>
 * </ul>
 * Immutable.
 *
 * @param enabled whether retries are bounded; {@code false} lets every retry through, as
 * Spring Cloud does
 * @param ratio retries allowed per request, a ratio in 0..1 (0: only the minimum)
 * @param minRetriesPerSecond retries allowed per second of the window whatever the
 * traffic, {@code >= 0}
 * @param window how far back requests and retries count, from 1 s to 1 min
 * @since 0.1.0
 */
public record RetryBudgetRules(boolean enabled, double ratio, int minRetriesPerSecond, Duration window) {

	/** Finagle's defaults: on, ratio 0.2, 10 retries per second, window 10 s. */
	public static final RetryBudgetRules DEFAULTS = new RetryBudgetRules(true, 0.2, 10, Duration.ofSeconds(10));

	/** No bound: every retry is allowed. */
	public static final RetryBudgetRules OFF = new RetryBudgetRules(false, DEFAULTS.ratio, DEFAULTS.minRetriesPerSecond,
			DEFAULTS.window);

	/**
	 * Validates.
	 * @throws IllegalArgumentException naming the property (relative to the retry
	 * section) when a value is out of range
	 * @throws NullPointerException if {@code window} is {@code null}
	 */
	public RetryBudgetRules {
		Objects.requireNonNull(window, "budget.window must be set");
		if (!(ratio >= 0 && ratio <= 1)) {
			throw new IllegalArgumentException("budget.ratio must be between 0 and 1, was " + ratio);
		}
		if (minRetriesPerSecond < 0) {
			throw new IllegalArgumentException(
					"budget.min-retries-per-second must be >= 0, was " + minRetriesPerSecond);
		}
		if (window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofMinutes(1)) > 0) {
			throw new IllegalArgumentException("budget.window must be between 1s and 1m, was " + window);
		}
	}

	/**
	 * Retries allowed in every window whatever the traffic.
	 * @return {@code minRetriesPerSecond} times the window in seconds
	 */
	public double reserve() {
		return this.minRetriesPerSecond * (this.window.toMillis() / 1000.0);
	}

}
