package dev.atlas.autoconfigure.overload;

import java.util.Collection;
import java.util.Map;

import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.overload.Retries;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryPolicy;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.RetryableStatusCodeException;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.ClassUtils;

/**
 * Spring Cloud's retry policy of one blocking request (RestTemplate, RestClient, Feign),
 * counting its retries as Spring Cloud's {@code BlockingLoadBalancedRetryPolicy} does
 * (retries on the same instance, then on the next, up to
 * {@code max-retries-on-same-service-instance} and
 * {@code max-retries-on-next-service-instance}) and with its retryable statuses and
 * exceptions, with two differences:
 * <ul>
 * <li>a failure that never reached the server (a refused, timed-out or unroutable
 * connection) is retried whatever the method, POST included; other failures only for GET,
 * or every method with {@code retry-on-all-operations} (as Spring Cloud);</li>
 * <li>each retry asks the service's {@link RetryBudget}; a refused one is not made, the
 * retry ends, and the caller gets the original failure (the exception, or the answer with
 * the retryable status);</li>
 * <li>an answer with a retryable status that carries the overload marker
 * ({@value OverloadMarks#HEADER}: an Atlas application below gave up for overload) is not
 * retried, and costs the budget nothing.</li>
 * </ul>
 * One instance per request, used on its thread; not thread-safe.
 *
 * @since 0.1.0
 */
public final class BudgetedRetryPolicy implements LoadBalancedRetryPolicy {

	private static final Log logger = LogFactory.getLog(BudgetedRetryPolicy.class);

	private static final boolean FEIGN_PRESENT = ClassUtils.isPresent("feign.Response",
			BudgetedRetryPolicy.class.getClassLoader());

	private final LoadBalancerProperties properties;

	private final @Nullable RetryBudget budget;

	private final String serviceId;

	private int sameServerCount;

	private int nextServerCount;

	/**
	 * Creates the policy of one request.
	 * @param properties the service's properties of Spring Cloud LoadBalancer
	 * @param budget the service's retry budget, or {@code null} for none
	 * @param serviceId the service
	 */
	public BudgetedRetryPolicy(LoadBalancerProperties properties, @Nullable RetryBudget budget, String serviceId) {
		this.properties = properties;
		this.budget = budget;
		this.serviceId = serviceId;
	}

	private boolean canRetry(LoadBalancedRetryContext context) {
		return Retries.methodAllows(context.getRequest().getMethod().name(),
				this.properties.getRetry().isRetryOnAllOperations(), context.getLastThrowable());
	}

	@Override
	public boolean canRetrySameServer(LoadBalancedRetryContext context) {
		return this.sameServerCount < this.properties.getRetry().getMaxRetriesOnSameServiceInstance()
				&& canRetry(context);
	}

	@Override
	public boolean canRetryNextServer(LoadBalancedRetryContext context) {
		// counted when the failure is registered, checked after: hence <=
		return this.nextServerCount <= this.properties.getRetry().getMaxRetriesOnNextServiceInstance()
				&& canRetry(context);
	}

	@Override
	public void close(LoadBalancedRetryContext context) {
	}

	/**
	 * Counts the failure as Spring Cloud does, then, when a retry will follow, asks the
	 * budget for it; a refusal ends the retry ({@code setExhaustedOnly}), so that Spring
	 * Retry gives the caller this failure.
	 */
	@Override
	public void registerThrowable(LoadBalancedRetryContext context, Throwable throwable) {
		if (!canRetrySameServer(context) && canRetry(context)) {
			this.sameServerCount = 0;
			this.nextServerCount++;
			if (!canRetryNextServer(context)) {
				context.setExhaustedOnly();
				if (throwable instanceof RetryableStatusCodeException) {
					// its retries spent on answers with a retryable status: overload seen
					// here, which the caller above need not retry again
					OverloadMarks.mark();
				}
				return;
			}
			// the interceptor chooses the next instance when none is set
			context.setServiceInstance(null);
		}
		else {
			this.sameServerCount++;
		}
		if (!context.isExhaustedOnly() && retryableException(throwable) && canRetryNextServer(context)) {
			if (overloadMarked(throwable)) {
				if (logger.isDebugEnabled()) {
					logger.debug("Retry of " + describe(context.getRequest()) + " not made: the answer says "
							+ OverloadMarks.HEADER + ", an Atlas application below gave up for overload");
				}
				context.setExhaustedOnly();
			}
			else if (!Retries.tryRetry(this.budget, this.serviceId, describe(context.getRequest()), throwable)) {
				context.setExhaustedOnly();
			}
		}
	}

	/**
	 * Whether the answer of a retryable status carries the overload marker
	 * ({@link OverloadMarks}): an Atlas application answering it gave up for overload, so
	 * it is not retried here again.
	 */
	static boolean overloadMarked(Throwable failure) {
		if (!(failure instanceof RetryableStatusCodeException status)) {
			return false;
		}
		Object response = status.getResponse();
		if (response instanceof ClientHttpResponse answer) {
			return OverloadMarks.isMarked(answer.getHeaders().getFirst(OverloadMarks.HEADER));
		}
		return FEIGN_PRESENT && FeignAnswers.marked(response);
	}

	private static String describe(HttpRequest request) {
		return request.getMethod() + " " + request.getURI();
	}

	/**
	 * Spring Cloud's {@code retryable-status-codes} (Atlas's default: 503).
	 */
	@Override
	public boolean retryableStatusCode(int statusCode) {
		return this.properties.getRetry().getRetryableStatusCodes().contains(statusCode);
	}

	/**
	 * Spring Cloud's {@code retryable-exceptions}, matched against the exception and its
	 * cause, or every exception with {@code retry-on-all-exceptions}; as Spring Cloud's
	 * policy, {@code true} for {@code null} (no attempt made yet). Never a request that
	 * found every instance at the per-instance in-flight limit
	 * ({@link NoInstanceAvailableException#isSaturated}).
	 */
	@Override
	public boolean retryableException(@Nullable Throwable exception) {
		if (NoInstanceAvailableException.isSaturated(exception)) {
			return false;
		}
		if (exception == null || this.properties.getRetry().isRetryOnAllExceptions()) {
			return true;
		}
		Throwable cause = exception.getCause();
		for (Class<? extends Throwable> type : this.properties.getRetry().getRetryableExceptions()) {
			if (type.isInstance(exception) || (cause != null && type.isInstance(cause))) {
				return true;
			}
		}
		return false;
	}

	/** Reads Feign's answers; loaded only when Feign is on the class path. */
	private static final class FeignAnswers {

		static boolean marked(Object response) {
			if (!(response instanceof feign.Response answer)) {
				return false;
			}
			for (Map.Entry<String, Collection<String>> header : answer.headers().entrySet()) {
				if (OverloadMarks.HEADER.equalsIgnoreCase(header.getKey()) && !header.getValue().isEmpty()) {
					return OverloadMarks.isMarked(header.getValue().iterator().next());
				}
			}
			return false;
		}

	}

}
