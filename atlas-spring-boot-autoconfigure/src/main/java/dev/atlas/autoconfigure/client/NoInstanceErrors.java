package dev.atlas.autoconfigure.client;

import java.util.Set;

import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import dev.atlas.loadbalancer.pipeline.NoInstanceResponse;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycleValidator;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;

/**
 * Turns Atlas's {@link NoInstanceResponse} into the error the caller sees, for the Spring
 * Cloud client paths that would otherwise lose the reason (a generic
 * {@code IllegalStateException}, {@code IllegalArgumentException: Service Instance cannot
 * be null} with spring-retry, a 503 from Feign or WebClient): before raising the
 * {@link NoInstanceAvailableException}, it completes the request's
 * {@link LoadBalancerLifecycle}s with {@code DISCARD}, as Spring Cloud does for an empty
 * response (so the {@code loadbalancer.requests.discard} meter still counts it). Only for
 * requests made by an HTTP client ({@link RequestDataContext}); any other request keeps
 * Spring Cloud's contract (a {@code null} instance). Stateless.
 */
final class NoInstanceErrors {

	private NoInstanceErrors() {
	}

	/**
	 * The error for a response, after the {@code DISCARD} callbacks; or {@code null} when
	 * the response is not Atlas's empty response or the request is not an HTTP client's.
	 * @param factory the load balancers and their lifecycles
	 * @param serviceId the service
	 * @param request the request Spring Cloud passed to the load balancer, may be
	 * {@code null}
	 * @param response the load balancer's response, may be {@code null}
	 * @return the exception to raise, or {@code null} to go on as Spring Cloud does
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	static @Nullable NoInstanceAvailableException discarded(ReactiveLoadBalancer.Factory<ServiceInstance> factory,
			String serviceId, @Nullable Request<?> request, @Nullable Object response) {
		if (!(response instanceof NoInstanceResponse none) || request == null
				|| !(request.getContext() instanceof RequestDataContext context)) {
			return null;
		}
		Set<LoadBalancerLifecycle> lifecycles = LoadBalancerLifecycleValidator.getSupportedLifecycleProcessors(
				factory.getInstances(serviceId, LoadBalancerLifecycle.class), context.getClass(), ResponseData.class,
				ServiceInstance.class);
		for (LoadBalancerLifecycle lifecycle : lifecycles) {
			lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.DISCARD, (Request) request, none));
		}
		if (none.reason() == NoInstanceReason.SATURATED) {
			// overload seen here: the answer of the inbound request says so
			OverloadMarks.mark();
		}
		return none.toException();
	}

}
