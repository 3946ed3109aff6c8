package dev.atlas.autoconfigure.client;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.stats.InstanceStatsLifecycle;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableExchangeFilterFunctionLoadBalancerRetryPolicy;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebClient exchange cancelled while in flight completes its request lifecycle (Spring
 * Cloud's filters complete it only on a response or an error), with both of Atlas's
 * filters; one that was answered is not completed twice.
 */
class CancelledExchangeTest {

	private final ServiceInstance instance = new DefaultServiceInstance("a", "user-service", "10.0.0.1", 8080, false);

	private final InstanceStats stats = new InstanceStats();

	private final List<CompletionContext<?, ?, ?>> completions = new CopyOnWriteArrayList<>();

	private final AtomicInteger started = new AtomicInteger();

	private final LoadBalancerLifecycle<Object, Object, ServiceInstance> lifecycle = new LoadBalancerLifecycle<>() {

		@Override
		public void onStart(Request<Object> request) {
		}

		@Override
		public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
			CancelledExchangeTest.this.started.incrementAndGet();
			new InstanceStatsLifecycle(CancelledExchangeTest.this.stats).onStartRequest(request, lbResponse);
		}

		@Override
		public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
			CancelledExchangeTest.this.completions.add(completionContext);
			new InstanceStatsLifecycle(CancelledExchangeTest.this.stats).onComplete(completionContext);
		}

	};

	private final ReactiveLoadBalancer.Factory<ServiceInstance> factory = new ReactiveLoadBalancer.Factory<>() {

		@Override
		public ReactiveLoadBalancer<ServiceInstance> getInstance(String serviceId) {
			return (request) -> Mono.just(new DefaultResponse(CancelledExchangeTest.this.instance));
		}

		@Override
		@SuppressWarnings("unchecked")
		public <X> Map<String, X> getInstances(String name, Class<X> type) {
			return (type == LoadBalancerLifecycle.class) ? Map.of("stats", (X) CancelledExchangeTest.this.lifecycle)
					: Map.of();
		}

		@Override
		public <X> @Nullable X getInstance(String name, Class<?> clazz, Class<?>... generics) {
			return null;
		}

		@Override
		public LoadBalancerProperties getProperties(String serviceId) {
			return new LoadBalancerProperties();
		}

	};

	private final ClientRequest request = ClientRequest
		.create(HttpMethod.GET, URI.create("http://user-service/users/1"))
		.build();

	private ExchangeFilterFunction plain() {
		return new AtlasReactiveNoInstanceFilters.Plain(this.factory, List.of());
	}

	private ExchangeFilterFunction retrying() {
		LoadBalancerRetryPolicy.Factory policies = (
				serviceId) -> new RetryableExchangeFilterFunctionLoadBalancerRetryPolicy(new LoadBalancerProperties());
		return new AtlasReactiveNoInstanceFilters.Retrying(policies, this.factory, List.of());
	}

	@Test
	void aCancelledExchangeIsCompletedAsFailedWithACancellation() {
		for (ExchangeFilterFunction filter : List.of(plain(), retrying())) {
			this.completions.clear();
			ExchangeFunction hanging = (request) -> Mono.never();
			Disposable call = filter.filter(this.request, hanging).subscribe();
			assertThat(this.stats.inFlight(this.instance)).isEqualTo(1);
			call.dispose();
			assertThat(this.stats.inFlight(this.instance)).isZero();
			assertThat(this.completions).singleElement().satisfies((completion) -> {
				assertThat(completion.status()).isEqualTo(CompletionContext.Status.FAILED);
				assertThat(completion.getThrowable()).isInstanceOf(CancellationException.class);
				assertThat(completion.getLoadBalancerResponse().getServer()).isSameAs(this.instance);
			});
		}
	}

	@Test
	void aTimeoutOfTheCallerCompletesTheExchange() {
		ExchangeFunction slow = (request) -> Mono.never();
		Mono<ClientResponse> call = plain().filter(this.request, slow).timeout(Duration.ofMillis(50));
		assertThat(call.onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(5))).isNull();
		assertThat(this.stats.inFlight(this.instance)).isZero();
		assertThat(this.stats.serviceInFlight()).isZero();
	}

	@Test
	void anAnsweredExchangeIsCompletedOnceEvenIfCancelledAfterwards() {
		ExchangeFunction answering = (request) -> Mono.just(ClientResponse.create(HttpStatus.OK).build());
		ClientResponse response = plain().filter(this.request, answering).block(Duration.ofSeconds(5));
		assertThat(response).isNotNull();
		assertThat(this.completions).singleElement()
			.satisfies((completion) -> assertThat(completion.status()).isEqualTo(CompletionContext.Status.SUCCESS));
		assertThat(this.stats.inFlight(this.instance)).isZero();
		assertThat(this.started).hasValue(1);
	}

}
