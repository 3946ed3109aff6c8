package dev.atlas.autoconfigure.overload;

import dev.atlas.loadbalancer.overload.Retries;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryFactory;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryPolicy;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.ServiceInstanceChooser;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.retry.RetryListener;
import org.springframework.retry.backoff.BackOffPolicy;

/**
 * Spring Cloud's retry factory of the blocking clients (RestTemplate, RestClient, Feign)
 * with Atlas's policy: each request's retries are counted as Spring Cloud counts them,
 * connect failures are requeued whatever the method, and every retry asks the service's
 * retry budget ({@link BudgetedRetryPolicy}). Back-off and listeners are the replaced
 * factory's. Put in place of Spring Cloud's {@code BlockingLoadBalancedRetryFactory}
 * (matched by exact class: an application's own factory is kept, and then retries are not
 * bounded). Thread-safe.
 *
 * @since 0.1.0
 */
public final class BudgetedRetryFactory implements LoadBalancedRetryFactory {

	private final LoadBalancedRetryFactory replaced;

	private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

	/**
	 * Creates the factory.
	 * @param replaced the factory it replaces (Spring Cloud's), for back-off and
	 * listeners
	 * @param factory the load balancers of every service (their properties and budgets)
	 */
	public BudgetedRetryFactory(LoadBalancedRetryFactory replaced,
			ReactiveLoadBalancer.Factory<ServiceInstance> factory) {
		this.replaced = replaced;
		this.factory = factory;
	}

	@Override
	public LoadBalancedRetryPolicy createRetryPolicy(String service, ServiceInstanceChooser serviceInstanceChooser) {
		LoadBalancerProperties properties = this.factory.getProperties(service);
		return new BudgetedRetryPolicy((properties != null) ? properties : new LoadBalancerProperties(),
				Retries.budget(this.factory, service), service);
	}

	@Override
	public RetryListener[] createRetryListeners(String service) {
		return this.replaced.createRetryListeners(service);
	}

	@Override
	public @Nullable BackOffPolicy createBackOffPolicy(String service) {
		return this.replaced.createBackOffPolicy(service);
	}

}
