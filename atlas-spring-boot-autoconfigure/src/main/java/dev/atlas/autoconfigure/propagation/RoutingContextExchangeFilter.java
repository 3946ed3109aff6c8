package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Writes the routing context's headers on outbound WebClient calls. Atlas puts it first
 * in the filter chain of every {@code WebClient.Builder} bean, so the load-balancer
 * filter sees the headers. The context comes from Reactor's {@code Context} (WebFlux, or
 * automatic context propagation), else from the subscribing thread's
 * {@link RoutingContextHolder}.
 */
public class RoutingContextExchangeFilter implements ExchangeFilterFunction {

	private final PropagatedHeaders headers;

	/**
	 * Creates the filter.
	 * @param headers what to write
	 */
	public RoutingContextExchangeFilter(PropagatedHeaders headers) {
		this.headers = headers;
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		return Mono.deferContextual((reactorContext) -> {
			Object fromReactor = reactorContext.getOrDefault(RoutingContextHolder.KEY, null);
			RoutingContext context = (fromReactor instanceof RoutingContext rc) ? rc : RoutingContextHolder.get();
			if (context == null || context.isEmpty()) {
				return next.exchange(request);
			}
			ClientRequest.Builder builder = ClientRequest.from(request);
			this.headers.write(context, request.headers()::containsHeader,
					(name, value) -> builder.header(name, value));
			return next.exchange(builder.build());
		});
	}

}
