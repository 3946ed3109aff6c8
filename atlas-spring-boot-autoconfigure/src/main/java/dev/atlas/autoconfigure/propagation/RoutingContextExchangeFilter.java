package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Captures the routing context of an outbound WebClient call into the request's attribute
 * {@link RoutingContextHolder#KEY}; it writes no header. Attributes never leave the
 * process: only on a load-balanced call does Spring Cloud's load-balancer filter (plain
 * or retrying) hand the request, attributes included, to
 * {@link RoutingContextClientRequestTransformer}, which writes the headers once the
 * instance is chosen, and Atlas's choice reads the context from that attribute on every
 * attempt. A call that is not load-balanced therefore sends no routing header.
 *
 * <p>
 * Atlas puts it first in the filter chain of every {@code WebClient.Builder} bean, so the
 * load-balancer filter sees the attribute. The context comes from Reactor's
 * {@code Context} (WebFlux, or automatic context propagation), else from the subscribing
 * thread's {@link RoutingContextHolder}. Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public class RoutingContextExchangeFilter implements ExchangeFilterFunction {

	/** Creates the filter. */
	public RoutingContextExchangeFilter() {
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		return Mono.deferContextual((reactorContext) -> {
			Object fromReactor = reactorContext.getOrDefault(RoutingContextHolder.KEY, null);
			RoutingContext context = (fromReactor instanceof RoutingContext rc) ? rc : RoutingContextHolder.get();
			if (context == null || context.isEmpty()) {
				return next.exchange(request);
			}
			return next.exchange(ClientRequest.from(request).attribute(RoutingContextHolder.KEY, context).build());
		});
	}

}
