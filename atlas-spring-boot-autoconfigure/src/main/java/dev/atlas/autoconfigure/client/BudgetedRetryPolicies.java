package dev.atlas.autoconfigure.client;

import dev.atlas.loadbalancer.overload.Retries;
import dev.atlas.loadbalancer.overload.RetryBudget;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryContext;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.http.HttpMethod;

/**
 * The WebClient retry policies of Spring Cloud's factory, each asking the service's retry
 * budget before a retry on a retryable status (a 503, by Atlas's default): a refused
 * retry is not made, and the caller gets the answer with that status. Retries after an
 * exception ask the budget when the retrying filter chooses the next instance
 * ({@link AtlasReactiveNoInstanceFilters.Retrying}). Thread-safe; each policy is one
 * request's.
 */
final class BudgetedRetryPolicies implements LoadBalancerRetryPolicy.Factory {

	private final LoadBalancerRetryPolicy.Factory policies;

	private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

	/**
	 * @param policies the factory it wraps (Spring Cloud's)
	 * @param factory the load balancers of every service (their budgets)
	 */
	BudgetedRetryPolicies(LoadBalancerRetryPolicy.Factory policies,
			ReactiveLoadBalancer.Factory<ServiceInstance> factory) {
		this.policies = policies;
		this.factory = factory;
	}

	@Override
	public LoadBalancerRetryPolicy apply(String serviceId) {
		return new Budgeted(this.policies.apply(serviceId), Retries.budget(this.factory, serviceId), serviceId);
	}

	/** One request's policy. */
	private record Budgeted(LoadBalancerRetryPolicy policy, @Nullable RetryBudget budget,
			String serviceId) implements LoadBalancerRetryPolicy {

		@Override
		public boolean canRetrySameServiceInstance(LoadBalancerRetryContext context) {
			return this.policy.canRetrySameServiceInstance(context) && budgetAllows();
		}

		@Override
		public boolean canRetryNextServiceInstance(LoadBalancerRetryContext context) {
			return this.policy.canRetryNextServiceInstance(context) && budgetAllows();
		}

		// Spring Cloud asks these two only for an answer with a retryable status, and
		// only when the status and the method allow a retry.
		private boolean budgetAllows() {
			return Retries.tryRetry(this.budget, this.serviceId, "a WebClient request",
					"an answer with a retryable status");
		}

		@Override
		public boolean retryableStatusCode(int statusCode) {
			return this.policy.retryableStatusCode(statusCode);
		}

		@Override
		public boolean retryableException(Throwable exception) {
			return this.policy.retryableException(exception);
		}

		@Override
		public boolean canRetryOnMethod(HttpMethod method) {
			return this.policy.canRetryOnMethod(method);
		}

	}

}
