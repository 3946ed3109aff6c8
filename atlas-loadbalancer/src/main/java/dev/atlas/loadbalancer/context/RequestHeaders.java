package dev.atlas.loadbalancer.context;

import java.util.Map;

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
		RequestData data = data(request);
		HttpHeaders headers = (data != null) ? data.getHeaders() : null;
		String value = (headers != null) ? headers.getFirst(name) : null;
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		return trimmed.isEmpty() ? null : trimmed;
	}

	/**
	 * The routing context the outbound request carries as an in-process attribute under
	 * {@link RoutingContextHolder#KEY}. Attributes are never sent; Atlas's WebClient
	 * filter puts the context there so that the choice, and every retried choice, sees
	 * the context the call was made with, while only a load-balanced call writes it as
	 * headers.
	 * @param request the load-balancing request, may be {@code null}
	 * @return the context, or {@code null} when the request carries none
	 */
	public static @Nullable RoutingContext carried(@Nullable Request<?> request) {
		RequestData data = data(request);
		Map<String, Object> attributes = (data != null) ? data.getAttributes() : null;
		return (attributes != null && attributes.get(RoutingContextHolder.KEY) instanceof RoutingContext context)
				? context : null;
	}

	/**
	 * A header's value for routing: from the outbound request if it carries the header,
	 * else from the routing context the outbound request carries as an attribute (see
	 * {@link #carried}), else from the routing context of the inbound request being
	 * served.
	 * @param request may be {@code null}
	 * @param context may be {@code null}
	 * @param name header name
	 * @return the value, or {@code null}
	 */
	public static @Nullable String resolve(@Nullable Request<?> request, @Nullable RoutingContext context,
			String name) {
		String value = first(request, name);
		if (value != null) {
			return value;
		}
		RoutingContext carried = carried(request);
		value = (carried != null) ? carried.get(name) : null;
		return (value != null || context == null) ? value : context.get(name);
	}

	private static @Nullable RequestData data(@Nullable Request<?> request) {
		return (request != null && request.getContext() instanceof RequestDataContext context)
				? context.getClientRequest() : null;
	}

}
