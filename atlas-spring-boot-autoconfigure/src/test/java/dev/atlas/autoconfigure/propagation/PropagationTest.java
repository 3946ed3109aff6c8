package dev.atlas.autoconfigure.propagation;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.autoconfigure.gray.AtlasGrayAutoConfiguration;
import dev.atlas.autoconfigure.gray.AtlasGrayHeadersAutoConfiguration;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import feign.RequestInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.Cookie;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.http.HttpCookie;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

class PropagationTest {

	private static final Map<String, String> V2 = Map.of("X-Service-Version", "v2");

	private final PropagatedHeaders headers = new PropagatedHeaders(Set.of("x-service-version", "x-user-id"));

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(AtlasGrayHeadersAutoConfiguration.class, AtlasPropagationAutoConfiguration.class));

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	@Test
	void capturesOnlyConfiguredNonBlankHeaders() {
		Map<String, String> inbound = Map.of("x-service-version", "v2", "x-user-id", " ", "x-other", "1");
		RoutingContext context = this.headers.capture(inbound::get);
		assertThat(context.headers()).containsExactly(Map.entry("x-service-version", "v2"));
		assertThat(this.headers.capture((name) -> null)).isSameAs(RoutingContext.EMPTY);
	}

	@Test
	void servletFilterSetsTheContextForTheRequestAndRestoresTheThreadAfterwards() throws Exception {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/chain/1");
		request.addHeader("X-Service-Version", "v2");
		AtomicReference<RoutingContext> seen = new AtomicReference<>();
		MockFilterChain chain = new MockFilterChain() {
			@Override
			public void doFilter(ServletRequest req, ServletResponse res) {
				seen.set(RoutingContextHolder.get());
			}
		};
		new RoutingContextServletFilter(this.headers).doFilter(request, new MockHttpServletResponse(), chain);
		assertThat(seen.get().get("X-Service-Version")).isEqualTo("v2");
		assertThat(RoutingContextHolder.get()).isNull();
		// A request without the header on the same thread sees no context.
		new RoutingContextServletFilter(this.headers).doFilter(new MockHttpServletRequest("GET", "/chain/2"),
				new MockHttpServletResponse(), chain);
		assertThat(seen.get()).isNull();
	}

	@Test
	void aContextSetWhileServingAnUntaggedRequestDoesNotLeakIntoTheNextOne() throws Exception {
		MockFilterChain setsOne = new MockFilterChain() {
			@Override
			public void doFilter(ServletRequest req, ServletResponse res) {
				RoutingContextHolder.set(RoutingContext.of(Map.of("x-service-version", "v9")));
			}
		};
		new RoutingContextServletFilter(this.headers).doFilter(new MockHttpServletRequest("GET", "/chain/3"),
				new MockHttpServletResponse(), setsOne);
		assertThat(RoutingContextHolder.get()).isNull();
	}

	@Test
	void taskDecoratorCarriesTheContextAndNothingLeaksIntoTheNextTask() {
		this.runner.run((context) -> {
			ThreadPoolTaskExecutor pool = new ThreadPoolTaskExecutor();
			pool.setCorePoolSize(1);
			pool.setMaxPoolSize(1);
			pool.setTaskDecorator(context.getBean(TaskDecorator.class));
			pool.initialize();
			try {
				RoutingContextHolder.set(RoutingContext.of(V2));
				String first = pool
					.submit(() -> Thread.currentThread().getName() + "="
							+ RoutingContextHolder.get().get("x-service-version"))
					.get();
				RoutingContextHolder.clear();
				String second = pool.submit(() -> Thread.currentThread().getName() + "=" + RoutingContextHolder.get())
					.get();
				String thread = first.substring(0, first.indexOf('='));
				assertThat(first).isEqualTo(thread + "=v2");
				assertThat(second).isEqualTo(thread + "=null");
			}
			finally {
				pool.shutdown();
			}
		});
	}

	@Test
	void restTemplateAndRestClientTransformerAddsMissingHeadersOnly() throws Exception {
		RoutingContextRequestTransformer transformer = new RoutingContextRequestTransformer(this.headers);
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v2", "X-User-Id", "42")));
		MockClientHttpRequest request = new MockClientHttpRequest(HttpMethod.GET, URI.create("http://a/"));
		request.getHeaders().add("X-User-Id", "7");
		transformer.transformRequest(request, null);
		assertThat(request.getHeaders().get("X-Service-Version")).containsExactly("v2");
		assertThat(request.getHeaders().get("X-User-Id")).as("explicit header wins").containsExactly("7");
	}

	@Test
	void feignTransformerAddsMissingHeadersOnly() {
		RoutingContextHolder.set(RoutingContext.of(V2));
		RoutingContextFeignRequestTransformer transformer = new RoutingContextFeignRequestTransformer(this.headers);
		feign.Request template = transformer.transformRequest(feignRequest(Map.of()), null);
		assertThat(template.headers().get("x-service-version")).containsExactly("v2");
		feign.Request explicit = transformer.transformRequest(feignRequest(Map.of("X-Service-Version", List.of("v9"))),
				null);
		assertThat(explicit.headers().get("X-Service-Version")).containsExactly("v9");
		RoutingContextHolder.clear();
		feign.Request none = feignRequest(Map.of());
		assertThat(transformer.transformRequest(none, null)).isSameAs(none);
	}

	private static feign.Request feignRequest(Map<String, Collection<String>> headers) {
		return feign.Request.create(feign.Request.HttpMethod.GET, "http://10.0.0.1:8080/who", headers, null, null,
				null);
	}

	@Test
	void webClientFilterReadsReactorContextThenTheThread() {
		AtomicReference<ClientRequest> filtered = new AtomicReference<>();
		AtomicReference<ClientRequest> sent = new AtomicReference<>();
		RoutingContextExchangeFilter filter = new RoutingContextExchangeFilter();
		RoutingContextClientRequestTransformer transformer = new RoutingContextClientRequestTransformer(this.headers);
		// What Spring Cloud's load-balancer filter does after Atlas's filter: apply the
		// transformers to the request for the chosen instance.
		ExchangeFunction loadBalanced = (r) -> {
			filtered.set(r);
			sent.set(transformer.transformRequest(r, null));
			return Mono.just(ClientResponse.create(HttpStatus.OK).build());
		};
		ClientRequest request = ClientRequest.create(HttpMethod.GET, URI.create("http://user-service/")).build();
		filter.filter(request, loadBalanced)
			.contextWrite((ctx) -> ctx.put(RoutingContextHolder.KEY, RoutingContext.of(V2)))
			.block();
		assertThat(sent.get().headers().getFirst("x-service-version")).isEqualTo("v2");
		assertThat(filtered.get().headers().containsHeader("x-service-version")).as("the filter writes no header")
			.isFalse();
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v3")));
		filter.filter(request, loadBalanced).block();
		assertThat(sent.get().headers().getFirst("x-service-version")).isEqualTo("v3");
		assertThat(filtered.get().headers().containsHeader("x-service-version")).isFalse();
	}

	@Test
	void webClientTransformerWritesOnlyTheCapturedContextAndLetsExplicitHeadersWin() {
		RoutingContextClientRequestTransformer transformer = new RoutingContextClientRequestTransformer(this.headers);
		RoutingContextHolder.set(RoutingContext.of(V2));
		ClientRequest uncaptured = ClientRequest.create(HttpMethod.GET, URI.create("http://10.0.0.1:8080/")).build();
		assertThat(transformer.transformRequest(uncaptured, null)).as("the thread's context is not read")
			.isSameAs(uncaptured);
		ClientRequest captured = ClientRequest.create(HttpMethod.GET, URI.create("http://10.0.0.1:8080/"))
			.header("X-User-Id", "7")
			.attribute(RoutingContextHolder.KEY,
					RoutingContext.of(Map.of("X-Service-Version", "v2", "X-User-Id", "42")))
			.build();
		ClientRequest sent = transformer.transformRequest(captured, null);
		assertThat(sent.headers().get("X-Service-Version")).containsExactly("v2");
		assertThat(sent.headers().get("X-User-Id")).as("explicit header wins").containsExactly("7");
	}

	@Test
	void headersAreWrittenByLoadBalancerTransformersOnlyNeverByAGlobalFeignInterceptor() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RoutingContextRequestTransformer.class)
			.hasSingleBean(RoutingContextClientRequestTransformer.class)
			.hasSingleBean(RoutingContextFeignRequestTransformer.class)
			.doesNotHaveBean(RequestInterceptor.class));
	}

	@Test
	void webClientFilterIsPutFirstOnEveryBuilderBean() {
		ExchangeFilterFunction users = (request, next) -> next.exchange(request);
		this.runner.withBean(WebClient.Builder.class, () -> WebClient.builder().filter(users)).run((context) -> {
			List<ExchangeFilterFunction> filters = new ArrayList<>();
			context.getBean(WebClient.Builder.class).filters(filters::addAll);
			assertThat(filters).hasSize(2);
			assertThat(filters.get(0)).isInstanceOf(RoutingContextExchangeFilter.class);
			assertThat(filters.get(1)).isSameAs(users);
		});
	}

	@Test
	void servletFilterIsRegisteredInServletApplicationsAndAllOfItCanBeTurnedOff() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AtlasGrayHeadersAutoConfiguration.class,
					AtlasPropagationAutoConfiguration.class))
			.run((context) -> assertThat(context).hasBean("atlasRoutingContextFilter"));
		this.runner.withPropertyValues("atlas.propagation.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(PropagatedHeaders.class));
		this.runner.withPropertyValues("atlas.propagation.headers=X-Tenant", "atlas.gray.hash-key-header=X-User-Id")
			.run((context) -> assertThat(context.getBean(PropagatedHeaders.class).names()).containsExactly("x-tenant",
					"x-service-version", "x-user-id"));
	}

	@Test
	void theHashKeyHeadersOfEveryServiceAreCarriedToo() {
		this.runner
			.withPropertyValues("atlas.gray.header=X-Lane", "atlas.propagation.headers=X-Tenant, x-lane",
					"atlas.services.user-service.gray.hash-key-header=X-User-Id",
					"atlas.services.order-service.gray.hash-key-header= X-Order-Id ",
					"atlas.services.billing.loadbalancer.strategy=smooth-round-robin")
			.run((context) -> assertThat(context.getBean(PropagatedHeaders.class).names()).containsExactly("x-tenant",
					"x-lane", "x-user-id", "x-order-id"));
	}

	private static LaneTagger betaAndCanaryRules() {
		return new LaneTagger(new GrayRules("X-Service-Version", null, GrayFallback.BASELINE, true, Set.of(), Map.of(),
				null,
				List.of(new LaneRule("v2", LaneRule.Source.HEADER, "X-User-Group", LaneRule.Match.EQUALS,
						List.of("beta")),
						new LaneRule("v3", LaneRule.Source.COOKIE, "canary", LaneRule.Match.EQUALS, List.of("1")),
						new LaneRule("v4", LaneRule.Source.QUERY, "lane", LaneRule.Match.IN, List.of("four", "4")))));
	}

	private @Nullable RoutingContext servletContextOf(MockHttpServletRequest request, LaneTagger lanes)
			throws Exception {
		AtomicReference<RoutingContext> seen = new AtomicReference<>();
		MockFilterChain chain = new MockFilterChain() {
			@Override
			public void doFilter(ServletRequest req, ServletResponse res) {
				seen.set(RoutingContextHolder.get());
			}
		};
		new RoutingContextServletFilter(this.headers, lanes).doFilter(request, new MockHttpServletResponse(), chain);
		return seen.get();
	}

	@Test
	void theServletFilterWritesTheTagOfTheFirstMatchingLaneRuleAsTheGrayHeader() throws Exception {
		LaneTagger lanes = betaAndCanaryRules();
		MockHttpServletRequest beta = new MockHttpServletRequest("GET", "/orders/1");
		beta.addHeader("X-User-Group", "beta");
		beta.addHeader("X-Service-Version", "v9");
		beta.addHeader("X-User-Id", "42");
		RoutingContext context = servletContextOf(beta, lanes);
		assertThat(context.get("X-Service-Version")).as("the rule wins over the inbound header").isEqualTo("v2");
		assertThat(context.get("X-User-Id")).isEqualTo("42");
		assertThat(context.get("X-User-Group")).as("not propagated: the tag says it").isNull();

		MockHttpServletRequest cookie = new MockHttpServletRequest("GET", "/orders/1");
		cookie.setCookies(new Cookie("session", "x"), new Cookie("canary", "1"));
		assertThat(servletContextOf(cookie, lanes).get("X-Service-Version")).isEqualTo("v3");

		MockHttpServletRequest query = new MockHttpServletRequest("POST", "/orders/1");
		query.setQueryString("a=1&lane=four");
		query.addParameter("lane", "ignored-form-value");
		assertThat(servletContextOf(query, lanes).get("X-Service-Version")).isEqualTo("v4");

		MockHttpServletRequest none = new MockHttpServletRequest("GET", "/orders/1");
		none.addHeader("X-User-Group", "alpha");
		none.addHeader("X-Service-Version", "v9");
		assertThat(servletContextOf(none, lanes).get("X-Service-Version")).as("no rule matches: the header")
			.isEqualTo("v9");
		assertThat(servletContextOf(new MockHttpServletRequest("GET", "/orders/1"), lanes)).isNull();
	}

	@Test
	void theWebFilterWritesTheTagOfTheFirstMatchingLaneRuleIntoTheReactorContext() {
		LaneTagger lanes = betaAndCanaryRules();
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.get("/orders/1").cookie(new HttpCookie("canary", "1")));
		AtomicReference<RoutingContext> seen = new AtomicReference<>();
		new RoutingContextWebFilter(this.headers, lanes).filter(exchange, (ex) -> Mono.deferContextual((context) -> {
			seen.set(context.get(RoutingContextHolder.KEY));
			return Mono.empty();
		})).block();
		assertThat(seen.get().get("X-Service-Version")).isEqualTo("v3");
	}

	@Test
	void laneRulesChangeAtRuntimeForRequestsThatStartAfterwards() throws Exception {
		LaneTagger lanes = betaAndCanaryRules();
		MockHttpServletRequest beta = new MockHttpServletRequest("GET", "/orders/1");
		beta.addHeader("X-User-Group", "beta");
		assertThat(servletContextOf(beta, lanes).get("X-Service-Version")).isEqualTo("v2");
		lanes.update(GrayRules.DEFAULTS);
		assertThat(lanes.hasRules()).isFalse();
		assertThat(servletContextOf(beta, lanes)).isNull();
	}

	@Test
	@SuppressWarnings("unchecked")
	void theAutoConfiguredServletFilterAppliesTheConfiguredLaneRules() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class,
					AtlasGrayAutoConfiguration.class, AtlasGrayHeadersAutoConfiguration.class,
					AtlasPropagationAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
					SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("atlas.gray.rules[0].tag=v2", "atlas.gray.rules[0].cookie=canary",
					"atlas.gray.rules[0].equals=1")
			.run((context) -> {
				RoutingContextServletFilter filter = ((FilterRegistrationBean<RoutingContextServletFilter>) context
					.getBean("atlasRoutingContextFilter")).getFilter();
				MockHttpServletRequest request = new MockHttpServletRequest("GET", "/orders/1");
				request.setCookies(new Cookie("canary", "1"));
				AtomicReference<RoutingContext> seen = new AtomicReference<>();
				filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain() {
					@Override
					public void doFilter(ServletRequest req, ServletResponse res) {
						seen.set(RoutingContextHolder.get());
					}
				});
				assertThat(seen.get().get("X-Service-Version")).isEqualTo("v2");
			});
	}

}
