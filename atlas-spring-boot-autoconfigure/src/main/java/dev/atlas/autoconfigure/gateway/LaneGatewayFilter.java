package dev.atlas.autoconfigure.gateway;

import java.net.URI;
import java.util.Collection;
import java.util.Map;

import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.autoconfigure.propagation.ServerRequestAttributes;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * Applies the lane rules ({@code atlas.gray.rules}) to a request Spring Cloud Gateway
 * routes to a load-balanced service ({@code lb://}): the tag of the first rule it matches
 * is written on the request as the gray header ({@code X-Service-Version}), replacing a
 * value the client sent, just before the gateway's load balancer chooses. Atlas then
 * routes it to that lane, and every later hop follows the header without evaluating the
 * rules again. Requests to other routes ({@code http://}, {@code https://}, ...) are left
 * as they are: nothing derived from a request goes to a host that is not a load-balanced
 * target. Stateless and thread-safe.
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
		if (!this.lanes.hasRules() || !loadBalanced(exchange)) {
			return chain.filter(exchange);
		}
		String tag = this.lanes.tagOf(new ServerRequestAttributes(exchange.getRequest()));
		if (tag == null) {
			return chain.filter(exchange);
		}
		String header = this.lanes.header();
		ServerHttpRequest tagged = exchange.getRequest()
			.mutate()
			.headers((headers) -> headers.set(header, tag))
			.build();
		return chain.filter(exchange.mutate().request(tagged).build());
	}

	/**
	 * Whether the route goes to a load-balanced service: its URL (or the scheme prefix)
	 * is {@code lb}, or was before the load balancer resolved it (a retry).
	 */
	static boolean loadBalanced(ServerWebExchange exchange) {
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		String schemePrefix = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		if ((url != null && "lb".equals(url.getScheme())) || "lb".equals(schemePrefix)) {
			return true;
		}
		Collection<URI> originals = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ORIGINAL_REQUEST_URL_ATTR);
		return originals != null && originals.stream().anyMatch((original) -> "lb".equals(original.getScheme()));
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
