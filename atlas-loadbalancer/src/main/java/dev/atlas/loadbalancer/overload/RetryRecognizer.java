package dev.atlas.loadbalancer.overload;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;

/**
 * Tells whether a load-balancing request is a retry of an earlier one, for a retry path
 * whose requests do not say so themselves (Spring Cloud Gateway's {@code Retry} filter
 * re-runs the filter chain with a plain request context). A retry does not deposit in the
 * {@link RetryBudget}. Declare one as a bean in the application context: each service's
 * load-balancer context collects the recognizers once, when it is created (at the
 * service's first call). Spring Cloud's own retries ({@code RetryableRequestContext}
 * naming the previous instance) are recognized without one. Implementations must be
 * thread-safe and cheap: they run on every request.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RetryRecognizer {

	/**
	 * Whether the request is a retry.
	 * @param request the request as Spring Cloud's lifecycle passes it, or {@code null}
	 * @return {@code true} for a retry of an earlier attempt
	 */
	boolean isRetry(@Nullable Request<?> request);

}
