package dev.atlas.autoconfigure.client;

import dev.atlas.autoconfigure.client.AtlasReactiveNoInstanceFilters.Attempt;
import dev.atlas.loadbalancer.overload.Retries;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryContext;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.http.HttpMethod;

/**
 * The WebClient retry policies of Spring Cloud's factory, each asking the service's retry
 * budget before a retry on a retryable status (a 503, by Atlas's default): a refused
 * retry is not made, and the caller gets the answer with that status. Bound to Atlas's
 * filter, an answer that carries the overload marker ({@link OverloadMarks}) is not
 * retried either. A policy made while Atlas's retrying filter starts a call
 * ({@link AtlasReactiveNoInstanceFilters.Retrying}, which Spring Cloud's filter asks for
 * the policy synchronously, on the calling thread) is bound to the call's
 * {@link Attempt}, which counts every retry of the call (after an exception too, decided
 * when the filter chooses again) and remembers a refusal for the rest of the call. The
 * factory is thread-safe; each policy is one call's.
 */
final class BudgetedRetryPolicies implements LoadBalancerRetryPolicy.Factory {

	/** The call whose policy is being made, set by the retrying filter around it. */
	static final ThreadLocal<@Nullable Attempt> BINDING = new ThreadLocal<>();

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
		return new Budgeted(this.policies.apply(serviceId), BINDING.get(), this.factory, serviceId);
	}

	/**
	 * One call's policy. Without an {@link Attempt} (a filter other than Atlas's asked),
	 * it asks the budget itself and remembers a refusal.
	 */
	private static final class Budgeted implements LoadBalancerRetryPolicy {

		private final LoadBalancerRetryPolicy policy;

		private final @Nullable Attempt attempt;

		private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

		private final String serviceId;

		private boolean refused;

		Budgeted(LoadBalancerRetryPolicy policy, @Nullable Attempt attempt,
				ReactiveLoadBalancer.Factory<ServiceInstance> factory, String serviceId) {
			this.policy = policy;
			this.attempt = attempt;
			this.factory = factory;
			this.serviceId = serviceId;
		}

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
			Attempt call = this.attempt;
			if (call != null) {
				return call.grantStatusRetry();
			}
			if (this.refused) {
				return false;
			}
			RetryBudget budget = Retries.budget(this.factory, this.serviceId);
			this.refused = !Retries.tryRetry(budget, this.serviceId, "a WebClient request",
					"an answer with a retryable status");
			return !this.refused;
		}

		@Override
		public boolean retryableStatusCode(int statusCode) {
			return this.policy.retryableStatusCode(statusCode);
		}

		@Override
		public boolean retryableException(Throwable exception) {
			// Spring Cloud's filter also asks for the exception's cause (null for Atlas's
			// no-instance error): a call whose choice found every instance full is never
			// retried, whatever retry-on-all-exceptions says.
			Attempt call = this.attempt;
			if (NoInstanceAvailableException.isSaturated(exception) || (call != null && call.saturated())) {
				return false;
			}
			return this.policy.retryableException(exception);
		}

		@Override
		public boolean canRetryOnMethod(HttpMethod method) {
			return this.policy.canRetryOnMethod(method);
		}

	}

}
