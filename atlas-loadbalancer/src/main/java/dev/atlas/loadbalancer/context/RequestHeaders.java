package dev.atlas.loadbalancer.context;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.http.HttpHeaders;

/**
 * Reads headers of the outbound request a load-balancing {@link Request} describes.
 * Spring Cloud builds a {@link RequestDataContext} for RestTemplate, RestClient,
 * WebClient and Feign calls; other requests have no headers.
 */
public final class RequestHeaders {

	private RequestHeaders() {
	}

	/**
	 * The first value of a header of the outbound request.
	 * @param request the load-balancing request, may be {@code null}
	 * @param name header name, case-insensitive
	 * @return the trimmed value, or {@code null} when absent or blank
	 */
	public static @Nullable String first(@Nullable Request<?> request, String name) {
		if (request == null || !(request.getContext() instanceof RequestDataContext context)) {
			return null;
		}
		RequestData data = context.getClientRequest();
		HttpHeaders headers = (data != null) ? data.getHeaders() : null;
		String value = (headers != null) ? headers.getFirst(name) : null;
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		return trimmed.isEmpty() ? null : trimmed;
	}

	/**
	 * A header's value for routing: from the outbound request if it carries it, else from
	 * the routing context of the inbound request being served.
	 * @param request may be {@code null}
	 * @param context may be {@code null}
	 * @param name header name
	 * @return the value, or {@code null}
	 */
	public static @Nullable String resolve(@Nullable Request<?> request, @Nullable RoutingContext context,
			String name) {
		String value = first(request, name);
		return (value != null || context == null) ? value : context.get(name);
	}

}
