package dev.atlas.loadbalancer.choice;

/**
 * The rules of {@code least-request} (and the choice count of {@code peak-ewma}).
 *
 * @param choiceCount how many candidates are drawn per pick and compared, {@code >= 2}; 2
 * is the "power of two choices" (Mitzenmacher), Envoy's default: nearly all the benefit
 * of comparing every instance at O(1) cost, and without sending every caller to the same
 * least-loaded instance at once (the herd behaviour of a full scan)
 * @param activeRequestBias how strongly in-flight requests count against weight,
 * {@code >= 0}: an instance ranks by {@code in-flight^bias ÷ weight}, lower first; 1.0
 * (Envoy's default) balances in-flight requests in proportion to weight; 0 ignores
 * in-flight requests (the draw by weight alone, i.e. weighted random)
 * @since 0.1.0
 */
public record LeastRequestRules(int choiceCount, double activeRequestBias) {

	/** Choice count 2, bias 1.0: Envoy's defaults. */
	public static final LeastRequestRules DEFAULTS = new LeastRequestRules(2, 1.0);

	/**
	 * Validates.
	 * @throws IllegalArgumentException if {@code choiceCount < 2} or the bias is negative
	 * or not finite
	 */
	public LeastRequestRules {
		if (choiceCount < 2) {
			throw new IllegalArgumentException("choice-count must be an integer >= 2, was " + choiceCount);
		}
		if (!(activeRequestBias >= 0) || Double.isInfinite(activeRequestBias)) {
			throw new IllegalArgumentException(
					"active-request-bias must be a finite number >= 0, was " + activeRequestBias);
		}
	}

}
