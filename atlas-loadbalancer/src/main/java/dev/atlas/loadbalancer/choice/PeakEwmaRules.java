package dev.atlas.loadbalancer.choice;

import java.time.Duration;
import java.util.Objects;

/**
 * The rules of {@code peak-ewma}.
 *
 * @param choiceCount how many candidates are drawn per pick and compared, {@code >= 2}
 * (2, the power of two choices, by default)
 * @param decayTime how fast the peak-sensitive average forgets, positive: after one decay
 * time without a response, a past peak counts for 1/e (37 %). 10 s by default (Finagle's
 * and Linkerd's): long enough that a slow instance is not retried at once, short enough
 * that a recovered one gets traffic back within a minute. The statistics of the service
 * ({@code InstanceStats}) apply it.
 * @since 0.1.0
 */
public record PeakEwmaRules(int choiceCount, Duration decayTime) {

	/** Choice count 2, decay time 10 s. */
	public static final PeakEwmaRules DEFAULTS = new PeakEwmaRules(2, Duration.ofSeconds(10));

	/**
	 * Validates.
	 * @throws IllegalArgumentException if {@code choiceCount < 2} or the decay time is
	 * not at least 1 ms
	 * @throws NullPointerException if {@code decayTime} is {@code null}
	 */
	public PeakEwmaRules {
		if (choiceCount < 2) {
			throw new IllegalArgumentException("choice-count must be an integer >= 2, was " + choiceCount);
		}
		Objects.requireNonNull(decayTime, "decay-time");
		if (decayTime.toMillis() < 1) {
			throw new IllegalArgumentException("decay-time must be at least 1ms, was " + decayTime);
		}
	}

}
