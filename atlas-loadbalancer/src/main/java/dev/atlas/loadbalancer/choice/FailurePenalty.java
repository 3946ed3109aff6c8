package dev.atlas.loadbalancer.choice;

import dev.atlas.loadbalancer.spi.PickContext;

/**
 * How the load-aware strategies weigh a candidate's recent failures
 * ({@link dev.atlas.loadbalancer.spi.PickContext#failureRate(int)}): its cost (its load,
 * or its latency times its load) is divided by its success rate {@code 1 - failureRate},
 * at most {@value #MAX_FACTOR}×, as ingress-nginx's EWMA balancer divides its score by
 * the success rate. So an instance that answers errors at once, with few requests in
 * flight and a short latency, does not look better than the healthy ones. Stateless.
 */
final class FailurePenalty {

	/** The largest factor, for an instance that failed every recent attempt. */
	static final double MAX_FACTOR = 100;

	private FailurePenalty() {
	}

	/**
	 * The factor of a candidate's cost.
	 * @param failureRate a ratio in 0..1
	 * @return {@code 1 / max(1 - failureRate, 1 / MAX_FACTOR)}: 1 for a healthy candidate
	 */
	static double factor(double failureRate) {
		return (failureRate <= 0) ? 1 : 1 / Math.max(1 - failureRate, 1 / MAX_FACTOR);
	}

	/**
	 * A candidate's load counted with its failures: {@code (inFlight + 1) × factor - 1},
	 * so that an idle healthy candidate is at 0 and an idle one failing every attempt at
	 * {@value #MAX_FACTOR} - 1.
	 * @param inFlight requests in flight, {@code >= 0}
	 * @param failureRate a ratio in 0..1
	 * @return {@code >= inFlight}
	 */
	static double load(int inFlight, double failureRate) {
		return (failureRate <= 0) ? inFlight : (inFlight + 1) * factor(failureRate) - 1;
	}

	/**
	 * A candidate's {@linkplain #load(int, double) load}, read from a pick's context.
	 * @param context the pick's context
	 * @param position the candidate's position
	 * @param failures {@link PickContext#anyFailing()}, read once per pick: when
	 * {@code false}, the failure rate is not read
	 * @return {@code >= 0}
	 */
	static double load(PickContext context, int position, boolean failures) {
		int inFlight = context.inFlight(position);
		return failures ? load(inFlight, context.failureRate(position)) : inFlight;
	}

}
