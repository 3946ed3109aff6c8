package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.spi.RoutingAttributes;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpCookie;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * The attributes lane rules read of a WebFlux request (an inbound one, or one Spring
 * Cloud Gateway routes): its headers, cookies and query parameters as Spring parsed them.
 * Used on the thread that handles the request; not thread-safe.
 *
 * @since 0.1.0
 */
public final class ServerRequestAttributes implements RoutingAttributes {

	private final ServerHttpRequest request;

	/**
	 * Reads a request.
	 * @param request the request
	 */
	public ServerRequestAttributes(ServerHttpRequest request) {
		this.request = request;
	}

	@Override
	public @Nullable String header(String lowerCaseName) {
		return RequestHeaders.trimmed(this.request.getHeaders().getFirst(lowerCaseName));
	}

	@Override
	public @Nullable String cookie(String name) {
		HttpCookie cookie = this.request.getCookies().getFirst(name);
		return (cookie != null) ? cookie.getValue() : null;
	}

	@Override
	public @Nullable String queryParameter(String name) {
		// the raw query, read as on the other paths (names as sent, values decoded)
		return RequestHeaders.queryParameter(this.request.getURI().getRawQuery(), name);
	}

}
