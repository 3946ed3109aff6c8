package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.web.reactive.function.client.ClientRequest;

/**
 * Writes the routing context's headers on outbound load-balanced WebClient calls. Spring
 * Cloud applies it (in its plain and its retrying load-balancer filter) only to
 * load-balanced calls, after the instance is chosen; the context is the one
 * {@link RoutingContextExchangeFilter} captured into the request's attribute
 * {@link RoutingContextHolder#KEY}. Headers the application set itself win. Stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
public class RoutingContextClientRequestTransformer implements LoadBalancerClientRequestTransformer {

	private final PropagatedHeaders headers;

	/**
	 * Creates the transformer.
	 * @param headers what to write
	 */
	public RoutingContextClientRequestTransformer(PropagatedHeaders headers) {
		this.headers = headers;
	}

	@Override
	public ClientRequest transformRequest(ClientRequest request, ServiceInstance instance) {
		Object carried = request.attributes().get(RoutingContextHolder.KEY);
		if (!(carried instanceof RoutingContext context) || context.isEmpty()) {
			return request;
		}
		return ClientRequest.from(request)
			.headers((outbound) -> this.headers.write(context, outbound::containsHeader, outbound::add))
			.build();
	}

}
