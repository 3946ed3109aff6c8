package dev.atlas.loadbalancer.spi;

import org.jspecify.annotations.Nullable;

/**
 * The attributes of a request that lane rules
 * ({@code dev.atlas.loadbalancer.routing.LaneRule}) may match: a header, a cookie, a
 * query parameter. Implemented over an outbound load-balancing request, an inbound
 * servlet or WebFlux request, and a gateway exchange. An instance is used on one thread
 * during one call; implementations need not be thread-safe.
 *
 * @since 0.1.0
 */
public interface RoutingAttributes {

	/**
	 * A header's first value.
	 * @param lowerCaseName the header name; any case works, but a name already in lower
	 * case is looked up without allocating
	 * @return the trimmed value, or {@code null} when absent or blank
	 */
	@Nullable String header(String lowerCaseName);

	/**
	 * A cookie's value.
	 * @param name the cookie name, case-sensitive
	 * @return the value (possibly empty), or {@code null} when the request carries no
	 * such cookie
	 */
	@Nullable String cookie(String name);

	/**
	 * A query parameter's first value, URL-decoded.
	 * @param name the parameter name, case-sensitive
	 * @return the value (empty for {@code ?name} without {@code =}), or {@code null} when
	 * the query has no such parameter
	 */
	@Nullable String queryParameter(String name);

}
