package dev.atlas.loadbalancer.overload;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;

/**
 * Feeds a service's {@link RetryBudget} from Spring Cloud LoadBalancer's request
 * lifecycle: every request deposits when it starts choosing an instance ({@code onStart},
 * which RestTemplate, RestClient, WebClient, Feign and Spring Cloud Gateway all call),
 * except a retry of one: a choice for a client's retry (a {@link RetryableRequestContext}
 * naming the instance that failed) or one a {@link RetryRecognizer} recognizes (the
 * gateway's). So the budget grows with the requests the callers make, not with their
 * retries. Arguments may be {@code null} as Spring Cloud's callers pass them. Thread-safe
 * and lock-free.
 *
 * @since 0.1.0
 */
public final class RetryBudgetLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

	private final RetryBudget budget;

	private final RetryRecognizer[] recognizers;

	/**
	 * Creates the feed of one service's budget.
	 * @param budget the budget fed
	 * @param recognizers what else tells a retry; no {@code null} element
	 */
	public RetryBudgetLifecycle(RetryBudget budget, List<RetryRecognizer> recognizers) {
		this.budget = Objects.requireNonNull(budget, "budget");
		this.recognizers = recognizers.toArray(RetryRecognizer[]::new);
	}

	@Override
	public void onStart(@Nullable Request<Object> request) {
		if (request != null && request.getContext() instanceof RetryableRequestContext retry
				&& retry.getPreviousServiceInstance() != null) {
			return;
		}
		for (RetryRecognizer recognizer : this.recognizers) {
			if (recognizer.isRetry(request)) {
				return;
			}
		}
		this.budget.deposit();
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
	}

}
