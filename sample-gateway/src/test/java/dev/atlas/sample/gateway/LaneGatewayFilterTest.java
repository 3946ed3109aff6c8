package dev.atlas.sample.gateway;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.autoconfigure.gateway.LaneGatewayFilter;
import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpCookie;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's gateway filter (in atlas-spring-boot-autoconfigure, tested here where Spring
 * Cloud Gateway is on the class path): the tag of the first lane rule a request matches
 * is written as {@code X-Service-Version} on requests routed to {@code lb://} services
 * only.
 */
class LaneGatewayFilterTest {

	private final LaneGatewayFilter filter = new LaneGatewayFilter(new LaneTagger(new GrayRules("X-Service-Version",
			null, GrayFallback.BASELINE, true, Set.of(), Map.of(), null,
			List.of(new LaneRule("v2", LaneRule.Source.HEADER, "X-User-Group", LaneRule.Match.EQUALS, List.of("beta")),
					new LaneRule("v3", LaneRule.Source.COOKIE, "canary", LaneRule.Match.EQUALS, List.of("1")),
					new LaneRule("v4", LaneRule.Source.QUERY, "lane", LaneRule.Match.REGEX, List.of("four|4"))))));

	/** The request as the filters after Atlas's see it. */
	private ServerHttpRequest routed(MockServerHttpRequest.BaseBuilder<?> request, String url) {
		MockServerWebExchange exchange = MockServerWebExchange.from(request);
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, URI.create(url));
		AtomicReference<ServerHttpRequest> seen = new AtomicReference<>();
		this.filter.filter(exchange, (next) -> {
			seen.set(next.getRequest());
			return Mono.empty();
		}).block();
		return seen.get();
	}

	@Test
	void aMatchingRuleWritesItsTagOnRequestsToLoadBalancedServices() {
		assertThat(routed(MockServerHttpRequest.get("/users/1").header("X-User-Group", "beta"),
				"lb://user-service/users/1")
			.getHeaders()
			.get("X-Service-Version")).containsExactly("v2");
		assertThat(routed(MockServerHttpRequest.get("/users/1").cookie(new HttpCookie("canary", "1")),
				"lb://user-service/users/1")
			.getHeaders()
			.get("X-Service-Version")).containsExactly("v3");
		assertThat(routed(MockServerHttpRequest.get("/users/1?lane=four"), "lb://user-service/users/1?lane=four")
			.getHeaders()
			.get("X-Service-Version")).containsExactly("v4");
	}

	@Test
	void theRuleReplacesTheHeaderTheClientSent() {
		assertThat(routed(
				MockServerHttpRequest.get("/users/1").header("X-User-Group", "beta").header("X-Service-Version", "v1"),
				"lb://user-service/users/1")
			.getHeaders()
			.get("X-Service-Version")).containsExactly("v2");
	}

	@Test
	void withoutAMatchingRuleTheRequestIsLeftAsItIs() {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/users/1")
			.header("X-User-Group", "alpha")
			.header("X-Service-Version", "v1");
		assertThat(routed(request, "lb://user-service/users/1").getHeaders().get("X-Service-Version"))
			.containsExactly("v1");
	}

	@Test
	void requestsToAFixedUrlGetNothing() {
		assertThat(
				routed(MockServerHttpRequest.get("/ext/1").header("X-User-Group", "beta"), "https://api.example.com/1")
					.getHeaders()
					.containsHeader("X-Service-Version"))
			.isFalse();
	}

	@Test
	void theGatewaysBalancerReadsTheRoutedRequestNotTheInboundContext() {
		// Atlas's WebFilter captured the client's X-Service-Version into the Reactor
		// context; a route filter removed it from the request: the balancer must not see
		// it
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/users/1"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, URI.create("lb://user-service/users/1"));
		AtomicReference<Object> seen = new AtomicReference<>();
		this.filter.filter(exchange, (next) -> Mono.deferContextual((context) -> {
			seen.set(context.get(RoutingContextHolder.KEY));
			return Mono.empty();
		}))
			.contextWrite((context) -> context.put(RoutingContextHolder.KEY,
					RoutingContext.of(Map.of("X-Service-Version", "v2"))))
			.block();
		assertThat(seen.get()).isSameAs(RoutingContext.EMPTY);
	}

	@Test
	void aFixedUrlRouteKeepsTheInboundContext() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/ext/1"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, URI.create("https://api.example.com/1"));
		RoutingContext inbound = RoutingContext.of(Map.of("X-Service-Version", "v2"));
		AtomicReference<Object> seen = new AtomicReference<>();
		this.filter.filter(exchange, (next) -> Mono.deferContextual((context) -> {
			seen.set(context.get(RoutingContextHolder.KEY));
			return Mono.empty();
		})).contextWrite((context) -> context.put(RoutingContextHolder.KEY, inbound)).block();
		assertThat(seen.get()).isSameAs(inbound);
	}

	@Test
	void itRunsJustBeforeTheGatewaysLoadBalancer() {
		assertThat(this.filter.getOrder()).isEqualTo(10_149);
	}

}
