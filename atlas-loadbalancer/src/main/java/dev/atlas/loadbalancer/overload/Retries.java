package dev.atlas.loadbalancer.overload;

import dev.atlas.loadbalancer.support.ConnectFailures;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;

/**
 * What every retry path asks before it retries: whether the method allows a retry of this
 * failure (Spring Cloud's rule, GET only unless
 * {@code spring.cloud.loadbalancer.retry.retry-on-all-operations}, widened by the requeue
 * of a failure that never reached the server), and whether the service's
 * {@link RetryBudget} allows one more retry now. A refusal is logged at DEBUG, one line,
 * and counted by the budget ({@code atlas.retry.budget.exhausted}). Stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
public final class Retries {

	private static final Logger log = LoggerFactory.getLogger(Retries.class);

	private Retries() {
	}

	/**
	 * The retry budget of a service.
	 * @param factory the load balancers of every service
	 * @param serviceId the service
	 * @return its budget, or {@code null} when its context has none (Atlas steps aside
	 * for the service, or the application removed it)
	 */
	public static @Nullable RetryBudget budget(ReactiveLoadBalancer.Factory<ServiceInstance> factory,
			String serviceId) {
		return factory.getInstance(serviceId, RetryBudget.class);
	}

	/**
	 * Whether a failed request may be retried as far as its method goes: an idempotent
	 * method by Spring Cloud's rule (GET, or every method when
	 * {@code retryOnAllOperations}), or any method when the failure never reached the
	 * server ({@link ConnectFailures#neverSent}: a refused, timed-out or unroutable
	 * connection), because nothing was sent (Finagle's requeue).
	 * @param method the request's method name (e.g. {@code GET}), or {@code null} when
	 * unknown
	 * @param retryOnAllOperations the value of Spring Cloud's
	 * {@code spring.cloud.loadbalancer.retry.retry-on-all-operations}
	 * @param failure the attempt's failure, or {@code null} for an answer with a
	 * retryable status
	 * @return {@code true} when the method allows a retry
	 */
	public static boolean methodAllows(@Nullable String method, boolean retryOnAllOperations,
			@Nullable Throwable failure) {
		return "GET".equals(method) || retryOnAllOperations || ConnectFailures.neverSent(failure);
	}

	/**
	 * Asks a service's budget for one retry, logging a refusal and
	 * {@linkplain OverloadMarks#mark() marking} the answer of the inbound request this
	 * thread handles, if any.
	 * @param budget the budget, or {@code null} for none (always allowed)
	 * @param serviceId the service, for the log line
	 * @param what the request, for the log line (e.g. {@code GET http://user-service/x})
	 * @param failure what failed, for the log line: an exception or a status
	 * @return {@code true} when the retry may be made
	 */
	public static boolean tryRetry(@Nullable RetryBudget budget, String serviceId, Object what, Object failure) {
		if (budget == null || budget.tryWithdraw()) {
			return true;
		}
		OverloadMarks.mark();
		if (log.isDebugEnabled()) {
			log.debug(
					"Retry of {} to {} not made: the retry budget is spent ({}; {} requests and {} retries in "
							+ "the window); the caller gets the original failure: {}",
					what, serviceId, budget.rules(), budget.requests(), budget.retries(), failure);
		}
		return false;
	}

}
