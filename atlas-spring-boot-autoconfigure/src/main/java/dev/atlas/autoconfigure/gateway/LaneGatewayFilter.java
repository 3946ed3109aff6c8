package dev.atlas.autoconfigure.gateway;

import java.net.URI;
import java.util.Map;

import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.autoconfigure.propagation.ServerRequestAttributes;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * Atlas's part in a request Spring Cloud Gateway routes to a load-balanced service
 * ({@code lb://}), just before the gateway's load balancer chooses:
 * <ul>
 * <li>the lane rules ({@code atlas.gray.rules}): the tag of the first rule the request
 * matches is written on it as the gray header ({@code X-Service-Version}), replacing a
 * value the client sent; Atlas routes it to that lane, and every later hop follows the
 * header without evaluating the rules again;</li>
 * <li>the routed request is what the choice reads: the routing context Atlas's
 * {@code WebFilter} captured from the inbound request is hidden from the gateway's
 * balancer, so that a header a route filter removed ({@code RemoveRequestHeader}) does
 * not come back from it.</li>
 * </ul>
 * Requests to other routes ({@code http://}, {@code https://}, ...) are left as they are:
 * nothing derived from a request goes to a host that is not a load-balanced target.
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public class LaneGatewayFilter implements GlobalFilter, Ordered {

	/** Just before {@link ReactiveLoadBalancerClientFilter}. */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 1;

	private final LaneTagger lanes;

	/**
	 * Creates the filter.
	 * @param lanes the lane rules in force
	 */
	public LaneGatewayFilter(LaneTagger lanes) {
		this.lanes = lanes;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		if (!loadBalanced(exchange)) {
			return chain.filter(exchange);
		}
		Map.Entry<String, String> lane = this.lanes.headerFor(new ServerRequestAttributes(exchange.getRequest()));
		ServerWebExchange routed = exchange;
		if (lane != null) {
			ServerHttpRequest tagged = exchange.getRequest()
				.mutate()
				.headers((headers) -> headers.set(lane.getKey(), lane.getValue()))
				.build();
			routed = exchange.mutate().request(tagged).build();
		}
		return chain.filter(routed)
			.contextWrite((context) -> context.put(RoutingContextHolder.KEY, RoutingContext.EMPTY));
	}

	/**
	 * Whether the route goes to a load-balanced service, as the gateway's load balancer
	 * decides it: the request URL's scheme, or the route's scheme prefix, is {@code lb}
	 * (the gateway sets the URL back to {@code lb://...} before every attempt, retries
	 * included).
	 */
	static boolean loadBalanced(ServerWebExchange exchange) {
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		String schemePrefix = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		return (url != null && "lb".equals(url.getScheme())) || "lb".equals(schemePrefix);
	}

	/**
	 * Runs at {@link #ORDER}.
	 * @return {@value #ORDER}
	 */
	@Override
	public int getOrder() {
		return ORDER;
	}

}
