package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.context.RequestHeaders;
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
 *
 * @since 0.1.0
 */
public interface CandidateRequest extends RoutingAttributes {

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

	/**
	 * A cookie of the outbound request (Spring Cloud's {@code RequestData}: the
	 * {@code Cookie} header of a RestTemplate, RestClient or Feign call, the cookies of a
	 * WebClient request or of the exchange a gateway routes).
	 * @param name the cookie name, case-sensitive
	 * @return the value, or {@code null} when absent (or the request carries no data)
	 */
	@Override
	default @Nullable String cookie(String name) {
		return RequestHeaders.cookie(request(), name);
	}

	/**
	 * A query parameter of the outbound request's URL.
	 * @param name the parameter name, case-sensitive
	 * @return the URL-decoded first value, or {@code null} when absent (or the request
	 * carries no data)
	 */
	@Override
	default @Nullable String queryParameter(String name) {
		return RequestHeaders.queryParameter(request(), name);
	}

}
