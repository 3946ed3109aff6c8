package dev.atlas.loadbalancer.spi;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;

/**
 * What a {@link CandidateFilter} and a {@link LoadBalancingStrategy} may read of the
 * request being load-balanced: Spring Cloud's {@link Request} and the routing headers
 * that apply to it.
 *
 * <p>
 * An instance is valid only during the call it is passed to; do not keep it. Not
 * thread-safe: it is used on the thread that chooses.
 */
public interface CandidateRequest {

	/**
	 * Spring Cloud's load-balancing request, e.g. a {@code RequestDataContext} for
	 * RestTemplate, RestClient, WebClient and Feign calls, or a
	 * {@code RetryableRequestContext} on a retry.
	 * @return the request, or {@code null} when the caller passed none
	 */
	@Nullable Request<?> request();

	/**
	 * A routing header's value: the outbound request's header if it carries one, else the
	 * value propagated from the inbound request being served (Reactor's {@code Context}
	 * of the subscriber, else the thread's routing context).
	 * @param lowerCaseName the header name; any case works, but a name already in lower
	 * case is looked up without allocating
	 * @return the trimmed value, or {@code null} when absent or blank
	 */
	@Nullable String header(String lowerCaseName);

}
