package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Captures the propagated headers of each inbound WebFlux request into Reactor's
 * {@code Context} under {@link RoutingContextHolder#KEY}, where Atlas's gray stage and
 * WebClient filter read it, and from which context-propagation restores the thread-local
 * holder when automatic propagation is on.
 *
 * @since 0.1.0
 */
public class RoutingContextWebFilter implements WebFilter, Ordered {

	private final PropagatedHeaders headers;

	private final @Nullable LaneTagger lanes;

	/**
	 * Creates the filter.
	 * @param headers what to capture
	 */
	public RoutingContextWebFilter(PropagatedHeaders headers) {
		this(headers, null);
	}

	/**
	 * Creates the filter that also applies the lane rules: the tag of the first rule an
	 * inbound request matches is put in its routing context as the gray header.
	 * @param headers what to capture
	 * @param lanes the lane rules in force, or {@code null} for none
	 */
	public RoutingContextWebFilter(PropagatedHeaders headers, @Nullable LaneTagger lanes) {
		this.headers = headers;
		this.lanes = lanes;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RoutingContext captured = this.headers.capture(exchange.getRequest().getHeaders()::getFirst);
		RoutingContext context = (this.lanes != null && this.lanes.hasRules())
				? this.lanes.tag(captured, new ServerRequestAttributes(exchange.getRequest())) : captured;
		if (context.isEmpty()) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange)
			.contextWrite((reactorContext) -> reactorContext.put(RoutingContextHolder.KEY, context));
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE + 10;
	}

}
