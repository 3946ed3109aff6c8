package dev.atlas.loadbalancer.stats;

import java.util.Objects;
import java.util.concurrent.CancellationException;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.support.CallbackFailures;
import dev.atlas.loadbalancer.support.InstanceFailures;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.TimedRequestContext;

/**
 * Feeds a service's {@link InstanceStats} from Spring Cloud LoadBalancer's request
 * lifecycle, which RestTemplate, RestClient, WebClient, Feign and Spring Cloud Gateway
 * all call once per attempt: a request that got an instance counts as sent and in flight
 * when it starts, and when it completes (not when it is discarded) leaves the in-flight
 * count and adds its outcome (a failure: an answer with one of
 * {@link InstanceStats#failureStatuses()}, by default every 5xx and 429, or no answer
 * because the instance was unreachable or stuck) and its latency, measured in nanoseconds
 * from the request's start time ({@link TimedRequestContext}, set here with
 * {@link System#nanoTime()} when the client did not set it; without one, the latency is
 * unknown and only the counts change). What the counts serve: the load-aware strategies,
 * the actuator view and the {@code atlas.picks} meter.
 *
 * <p>
 * Arguments may be {@code null} as Spring Cloud's callers pass them (a request without
 * context, a response without server): such a callback changes nothing. Thread-safe and
 * lock-free, as {@link InstanceStats} is.
 *
 * @since 0.1.0
 */
public class InstanceStatsLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

	private static final Logger log = LoggerFactory.getLogger(InstanceStatsLifecycle.class);

	private final InstanceStats stats;

	/**
	 * Creates the feed of one service's statistics.
	 * @param stats the statistics fed; not {@code null}
	 */
	public InstanceStatsLifecycle(InstanceStats stats) {
		this.stats = Objects.requireNonNull(stats, "stats");
	}

	@Override
	public void onStart(Request<Object> request) {
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
		try {
			ServiceInstance server = BracketedHost.chosen(lbResponse);
			if (server != null) {
				if (request != null && request.getContext() instanceof TimedRequestContext timed
						&& timed.getRequestStartTime() == 0) {
					timed.setRequestStartTime(System.nanoTime());
				}
				this.stats.started(server);
			}
		}
		catch (RuntimeException ex) {
			// A callback must never hide the request's own outcome from the caller.
			CallbackFailures.swallowed(log, "onStartRequest", ex);
		}
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		try {
			Response<ServiceInstance> response = completionContext.getLoadBalancerResponse();
			ServiceInstance server = BracketedHost.chosen(response);
			if (server != null && completionContext.status() != CompletionContext.Status.DISCARD) {
				Throwable failure = completionContext.getThrowable();
				// A request its caller gave up on tells nothing of the instance's speed:
				// it
				// ends its count in flight, and no latency is recorded.
				long duration = (failure instanceof CancellationException) ? -1
						: durationNanos(completionContext.getLoadBalancerRequest());
				this.stats.completed(server, duration, failed(failure, completionContext.getClientResponse()));
			}
		}
		catch (RuntimeException ex) {
			// A callback must never hide the request's own outcome from the caller.
			CallbackFailures.swallowed(log, "onComplete", ex);
		}
	}

	/**
	 * Whether the instance failed the request: an answer with one of the statistics'
	 * failure statuses, or no answer because it was unreachable or stuck (not the
	 * caller's own failures).
	 */
	private boolean failed(@Nullable Throwable failure, @Nullable Object clientResponse) {
		if (failure != null) {
			return InstanceFailures.isInstanceFailure(failure);
		}
		return this.stats.failureStatuses().isFailure(InstanceFailures.statusCode(clientResponse));
	}

	private static long durationNanos(Request<Object> request) {
		if (request != null && request.getContext() instanceof TimedRequestContext timed
				&& timed.getRequestStartTime() != 0) {
			return Math.max(0, System.nanoTime() - timed.getRequestStartTime());
		}
		return -1;
	}

}
