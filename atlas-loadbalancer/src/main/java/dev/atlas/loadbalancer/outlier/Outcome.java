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
	 * A gateway failure: connection refused or timed out, read timeout, connection reset,
	 * 502, 503 or 504. Counts towards both {@code consecutive-gateway-failure} and
	 * {@code consecutive5xx} (as in Envoy).
	 */
	GATEWAY_FAILURE,

	/**
	 * Nothing to learn about the instance (the caller cancelled, or failed for a reason
	 * of its own): changes no count.
	 */
	IGNORED

}
