package dev.atlas.autoconfigure.propagation;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import feign.Request;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.openfeign.loadbalancer.LoadBalancerFeignRequestTransformer;

/**
 * Writes the routing context's headers on outbound load-balanced Feign calls. Spring
 * Cloud OpenFeign applies it (in its plain and its retrying load-balancing client) only
 * to load-balanced calls, after the instance is chosen, so a {@code @FeignClient} with a
 * fixed {@code url} sends no routing header. Feign runs on the calling thread, where the
 * servlet filter or the task decorator set the context. Headers the application set
 * itself (a {@code RequestInterceptor}, a {@code @RequestHeader}) win. Stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
public class RoutingContextFeignRequestTransformer implements LoadBalancerFeignRequestTransformer {

	private final PropagatedHeaders headers;

	/**
	 * Creates the transformer.
	 * @param headers what to write
	 */
	public RoutingContextFeignRequestTransformer(PropagatedHeaders headers) {
		this.headers = headers;
	}

	@Override
	public Request transformRequest(Request request, ServiceInstance instance) {
		RoutingContext context = RoutingContextHolder.get();
		if (context == null || context.isEmpty()) {
			return request;
		}
		Map<String, Collection<String>> outbound = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
		outbound.putAll(request.headers());
		int before = outbound.size();
		this.headers.write(context, outbound::containsKey, (name, value) -> outbound.put(name, List.of(value)));
		if (outbound.size() == before) {
			return request;
		}
		return Request.create(request.httpMethod(), request.url(), outbound, request.body(), request.charset(),
				request.requestTemplate());
	}

}
