package dev.atlas.autoconfigure.propagation;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import feign.RequestTemplate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.core.task.TaskDecorator;
import org.springframework.http.HttpMethod;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

class PropagationTest {

	private static final Map<String, String> V2 = Map.of("X-Service-Version", "v2");

	private final PropagatedHeaders headers = new PropagatedHeaders(Set.of("x-service-version", "x-user-id"));

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasPropagationAutoConfiguration.class));

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
			public void doFilter(jakarta.servlet.ServletRequest req, jakarta.servlet.ServletResponse res) {
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
	void case14b_taskDecoratorCarriesTheContextAndNothingLeaksIntoTheNextTask() {
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
	void feignInterceptorAddsMissingHeadersOnly() {
		RoutingContextHolder.set(RoutingContext.of(V2));
		RequestTemplate template = new RequestTemplate();
		new RoutingContextFeignInterceptor(this.headers).apply(template);
		assertThat(template.headers().get("x-service-version")).containsExactly("v2");
		RequestTemplate explicit = new RequestTemplate().header("X-Service-Version", "v9");
		new RoutingContextFeignInterceptor(this.headers).apply(explicit);
		assertThat(explicit.headers().get("X-Service-Version")).containsExactly("v9");
	}

	@Test
	void webClientFilterReadsReactorContextThenTheThread() {
		AtomicReference<ClientRequest> sent = new AtomicReference<>();
		RoutingContextExchangeFilter filter = new RoutingContextExchangeFilter(this.headers);
		ClientRequest request = ClientRequest.create(HttpMethod.GET, URI.create("http://user-service/")).build();
		filter.filter(request, (r) -> {
			sent.set(r);
			return Mono.just(ClientResponse.create(org.springframework.http.HttpStatus.OK).build());
		}).contextWrite((ctx) -> ctx.put(RoutingContextHolder.KEY, RoutingContext.of(V2))).block();
		assertThat(sent.get().headers().getFirst("x-service-version")).isEqualTo("v2");
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v3")));
		filter.filter(request, (r) -> {
			sent.set(r);
			return Mono.just(ClientResponse.create(org.springframework.http.HttpStatus.OK).build());
		}).block();
		assertThat(sent.get().headers().getFirst("x-service-version")).isEqualTo("v3");
	}

	@Test
	void case14d_webClientFilterIsPutFirstOnEveryBuilderBean() {
		ExchangeFilterFunction users = (request, next) -> next.exchange(request);
		this.runner.withBean(WebClient.Builder.class, () -> WebClient.builder().filter(users)).run((context) -> {
			List<ExchangeFilterFunction> filters = new java.util.ArrayList<>();
			context.getBean(WebClient.Builder.class).filters(filters::addAll);
			assertThat(filters).hasSize(2);
			assertThat(filters.get(0)).isInstanceOf(RoutingContextExchangeFilter.class);
			assertThat(filters.get(1)).isSameAs(users);
		});
	}

	@Test
	void servletFilterIsRegisteredInServletApplicationsAndAllOfItCanBeTurnedOff() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AtlasPropagationAutoConfiguration.class))
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

}
