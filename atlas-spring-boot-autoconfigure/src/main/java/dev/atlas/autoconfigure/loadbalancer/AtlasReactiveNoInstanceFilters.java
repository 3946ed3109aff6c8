package dev.atlas.autoconfigure.loadbalancer;

import java.util.List;

import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.client.loadbalancer.reactive.ReactorLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableLoadBalancerExchangeFilterFunction;

/**
 * Spring Cloud's WebClient load-balancer filters, except that when Atlas chooses no
 * instance the exchange fails with a {@link NoInstanceAvailableException} naming the
 * service and the reason (after the {@code DISCARD} lifecycle callbacks), instead of
 * answering a 503 whose body says neither the reason nor, with retry, being retried until
 * {@code Retries exhausted}. The exception is not retryable (it is no I/O error), so a
 * retrying filter passes it on at once.
 */
final class AtlasReactiveNoInstanceFilters {

	private AtlasReactiveNoInstanceFilters() {
	}

	static <C extends RequestDataContext> Mono<Response<ServiceInstance>> failIfNone(
			ReactiveLoadBalancer.Factory<ServiceInstance> factory, String serviceId, Request<C> request,
			Mono<Response<ServiceInstance>> chosen) {
		return chosen.flatMap((response) -> {
			NoInstanceAvailableException none = NoInstanceErrors.discarded(factory, serviceId, request, response);
			return (none != null) ? Mono.error(none) : Mono.just(response);
		});
	}

	/**
	 * The filter without retry ({@code spring.cloud.loadbalancer.retry.enabled=false}).
	 */
	static final class Plain extends ReactorLoadBalancerExchangeFilterFunction {

		private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

		Plain(ReactiveLoadBalancer.Factory<ServiceInstance> factory,
				List<LoadBalancerClientRequestTransformer> transformers) {
			super(factory, transformers);
			this.factory = factory;
		}

		@Override
		protected Mono<Response<ServiceInstance>> choose(String serviceId, Request<RequestDataContext> request) {
			return failIfNone(this.factory, serviceId, request, super.choose(serviceId, request));
		}

	}

	/** The retrying filter (Atlas's default). */
	static final class Retrying extends RetryableLoadBalancerExchangeFilterFunction {

		private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

		Retrying(LoadBalancerRetryPolicy.Factory retryPolicyFactory,
				ReactiveLoadBalancer.Factory<ServiceInstance> factory,
				List<LoadBalancerClientRequestTransformer> transformers) {
			super(retryPolicyFactory, factory, transformers);
			this.factory = factory;
		}

		@Override
		protected Mono<Response<ServiceInstance>> choose(String serviceId, Request<RetryableRequestContext> request) {
			return failIfNone(this.factory, serviceId, request, super.choose(serviceId, request));
		}

	}

}
