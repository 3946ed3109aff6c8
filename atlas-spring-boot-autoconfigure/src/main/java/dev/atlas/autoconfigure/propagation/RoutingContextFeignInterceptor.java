package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RoutingContextHolder;
import feign.RequestInterceptor;
import feign.RequestTemplate;

/**
 * Writes the routing context's headers on outbound Feign calls (Feign runs on the calling
 * thread, where the servlet filter or the task decorator set the context).
 */
public class RoutingContextFeignInterceptor implements RequestInterceptor {

	private final PropagatedHeaders headers;

	/**
	 * Creates the interceptor.
	 * @param headers what to write
	 */
	public RoutingContextFeignInterceptor(PropagatedHeaders headers) {
		this.headers = headers;
	}

	@Override
	public void apply(RequestTemplate template) {
		this.headers.write(RoutingContextHolder.get(),
				(name) -> template.headers().keySet().stream().anyMatch(name::equalsIgnoreCase),
				(name, value) -> template.header(name, value));
	}

}
