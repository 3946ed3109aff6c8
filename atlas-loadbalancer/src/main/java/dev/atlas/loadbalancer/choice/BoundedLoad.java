package dev.atlas.loadbalancer.choice;

import dev.atlas.loadbalancer.spi.PickContext;

/**
 * Bounded load for consistent hashing (Mirrokni, Thorup and Zadimoghaddam, "Consistent
 * Hashing with Bounded Loads", SODA 2018; Envoy's {@code hash_balance_factor}): an
 * instance whose in-flight requests reach
 * {@code ceil(loadFactor × (in-flight of all candidates + 1) × weight ÷ Σweight)} is
 * passed over for the next instance on the ring, so that a hot key cannot overload one
 * instance. The ring ({@link HashRing}) and the walk over it stay in
 * {@link RingHashBalancer}; this is the bound alone.
 *
 * <p>
 * In-flight requests are this caller's own ({@link PickContext#inFlight}), counted in
 * requests. Up to {@value #EXACT_TOTAL_UP_TO} candidates their total is summed; beyond,
 * the service's total in flight ({@link PickContext#serviceInFlight()}) is used, so the
 * bound costs O(1), not O(n) as in Envoy: that is exact when the candidates are the whole
 * service and looser otherwise (a gray lane's or a cluster's candidates are bounded by
 * the service's average, not their own). An instance with nothing in flight and no recent
 * failures ({@link FailurePenalty}) is never passed over.
 *
 * <p>
 * Immutable and thread-safe; allocates nothing.
 */
final class BoundedLoad {

	/** Candidates up to which the bound sums every in-flight count. */
	static final int EXACT_TOTAL_UP_TO = 64;

	private final double loadFactor;

	/**
	 * @param loadFactor how far above the average an instance may go, {@code > 1} (e.g.
	 * 1.25: 25 % above)
	 */
	BoundedLoad(double loadFactor) {
		this.loadFactor = loadFactor;
	}

	/**
	 * The bound of one pick, per unit of weight: {@code loadFactor × (in-flight of all
	 * candidates + 1) ÷ Σweight}. Computed once per pick, and only when an instance with
	 * requests in flight is met.
	 * @param context the pick's context, by candidate position
	 * @param candidates the number of candidates
	 * @param totalWeight the candidates' total weight, {@code > 0}
	 * @return requests per unit of weight
	 */
	double perWeight(PickContext context, int candidates, double totalWeight) {
		return this.loadFactor * (totalInFlight(context, candidates) + 1) / totalWeight;
	}

	/**
	 * Whether an instance is below its bound.
	 * @param inFlight its requests in flight, counted with its recent failures
	 * ({@link FailurePenalty#load}), {@code > 0}
	 * @param perWeight the pick's {@link #perWeight bound per unit of weight}
	 * @param weight its weight
	 * @return {@code true} when it may take the request
	 */
	static boolean accepts(double inFlight, double perWeight, double weight) {
		return inFlight < Math.ceil(perWeight * weight);
	}

	/**
	 * Requests in flight to the candidates: summed up to {@value #EXACT_TOTAL_UP_TO}
	 * candidates; beyond, the service's total when the context knows it (an upper bound,
	 * exact when the candidates are the whole service).
	 */
	static double totalInFlight(PickContext context, int candidates) {
		if (candidates > EXACT_TOTAL_UP_TO) {
			long service = context.serviceInFlight();
			if (service >= 0) {
				return service;
			}
		}
		long sum = 0;
		for (int position = 0; position < candidates; position++) {
			sum += context.inFlight(position);
		}
		return sum;
	}

}
