package dev.atlas.loadbalancer.outlier;

/**
 * What one request to an instance tells outlier detection, classified from Spring Cloud
 * LoadBalancer's request lifecycle (status code or exception).
 *
 * @since 0.1.0
 */
public enum Outcome {

	/** An answer below 500: resets the instance's consecutive failure counts. */
	SUCCESS,

	/**
	 * A 5xx answer other than 502, 503 and 504: counts towards {@code consecutive5xx},
	 * resets the gateway failure count.
	 */
	SERVER_ERROR,

	/**
	 * A gateway failure after the request may have reached the instance: read timeout,
	 * connection reset, 502 or 504. Counts towards both
	 * {@code consecutive-gateway-failure} and {@code consecutive5xx} (as in Envoy).
	 */
	GATEWAY_FAILURE,

	/**
	 * A gateway failure that proves the instance gone: the connection refused, a connect
	 * timeout, no route to it, a host name that does not resolve (nothing was sent;
	 * Envoy's locally originated errors). Counts as {@link #GATEWAY_FAILURE}; when
	 * {@code max-ejection-percent} allows no more ejections, an instance ejected for such
	 * failures takes the place of one ejected for its answers (alive, it still serves).
	 */
	UNREACHABLE,

	/**
	 * A 503 answer: the instance is alive and refuses the request, usually for load.
	 * Counts as {@link #GATEWAY_FAILURE}, except that reaching a threshold with it ejects
	 * nothing before the run of failures has lasted 1 s (an instance that sheds load
	 * answers 503 at once while the requests it accepted take their time), nor while the
	 * fleet is overloaded as a whole: another instance of the service is shedding load
	 * too (its last two answers or more were 503, the last within a second). Ejecting
	 * live instances would only overload the rest. Only a run that ends with a 503 is
	 * judged so: a run of 503s that ends with a 502 or 504 ejects as before.
	 */
	OVERLOADED,

	/**
	 * Nothing to learn about the instance (the caller cancelled, or failed for a reason
	 * of its own): changes no count.
	 */
	IGNORED;

	/**
	 * Whether this counts as a gateway failure ({@code consecutive-gateway-failure}).
	 * @return {@code true} for {@link #GATEWAY_FAILURE}, {@link #UNREACHABLE} and
	 * {@link #OVERLOADED}
	 */
	public boolean isGatewayFailure() {
		return this == GATEWAY_FAILURE || this == UNREACHABLE || this == OVERLOADED;
	}

}
