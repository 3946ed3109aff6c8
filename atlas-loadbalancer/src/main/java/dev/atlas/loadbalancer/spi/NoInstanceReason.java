package dev.atlas.loadbalancer.spi;

/**
 * Why a request got no instance: the reason Atlas names in the "no instances available"
 * error a caller sees. Found once per request that gets no instance, from where the
 * candidates ran out: the registry's list, the {@link CandidateFilter} that left none
 * (its {@link CandidateFilter#emptyReason()}), or the strategy.
 *
 * @since 0.1.0
 */
public enum NoInstanceReason {

	/** The registry (the supplier chain) lists no instance of the service. */
	NO_INSTANCES("the registry lists no instance of it"),

	/**
	 * No instance has the tag the request asks for and {@code atlas.gray.fallback} is
	 * {@code none}.
	 */
	GRAY_FALLBACK_NONE("no instance has the requested gray tag and atlas.gray.fallback is none"),

	/**
	 * Every candidate has weight 0 and {@code atlas.loadbalancer.all-zero-weights} is
	 * {@code reject}.
	 */
	ALL_WEIGHTS_ZERO("every candidate has weight 0 and atlas.loadbalancer.all-zero-weights is reject"),

	/**
	 * Every candidate of the request's lane is ejected as an outlier and
	 * {@code atlas.outlier.panic-threshold-percent} is 0 (with a positive threshold the
	 * lane is in panic mode and its ejected instances stay candidates).
	 */
	OUTLIERS_EJECTED("every candidate is ejected as an outlier and atlas.outlier.panic-threshold-percent is 0"),

	/** A candidate filter (the application's own) left no candidate. */
	FILTERED_OUT("a candidate filter left no instance"),

	/**
	 * The candidates ran out above Atlas's stage, in a supplier the application put on
	 * top of it, or below it in a way Atlas cannot tell apart.
	 */
	NO_CANDIDATES("no candidate was left for the request"),

	/**
	 * Every candidate has {@code atlas.loadbalancer.max-in-flight-per-instance} requests
	 * of this caller in flight ({@link InFlightLimit}): the request fails at once and is
	 * never retried.
	 */
	SATURATED("every candidate has atlas.loadbalancer.max-in-flight-per-instance requests in flight"),

	/** The strategy chose none although candidates with a positive weight remained. */
	NONE_CHOSEN("the strategy chose none of the candidates");

	private final String description;

	NoInstanceReason(String description) {
		this.description = description;
	}

	/**
	 * What the reason means, for messages.
	 * @return e.g. {@code the registry lists no instance of it}
	 */
	public String description() {
		return this.description;
	}

}
