package dev.atlas.loadbalancer.outlier;

import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.support.CallbackFailures;
import dev.atlas.loadbalancer.support.ConnectFailures;
import dev.atlas.loadbalancer.support.InstanceFailures;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * Feeds outlier detection from Spring Cloud LoadBalancer's request lifecycle, which
 * RestTemplate, RestClient, WebClient, Feign and Spring Cloud Gateway all call once per
 * attempt: each completed request becomes an {@link Outcome}.
 * <ul>
 * <li>an answer: 502 and 504 are gateway failures, 503 an overloaded instance (a gateway
 * failure that ejects nothing before its run of failures has lasted 1 s, nor while
 * another instance sheds load too), other 5xx server errors, anything else a
 * success;</li>
 * <li>a failure without an answer: an unreachable instance when the request never reached
 * it (connection refused, connect timeout, no route: {@link ConnectFailures#neverSent});
 * a gateway failure when another {@link IOException} (connection reset, read timeout,
 * closed prematurely) or a {@link TimeoutException} is among its causes, or a timeout
 * exception of another library (by class name, e.g. Netty's); any other exception is the
 * caller's own and changes nothing, nor does a discarded (cancelled) request.</li>
 * </ul>
 * It also counts the service's requests (those that found no instance too), which tells
 * the detector whether anybody still calls the service ({@link OutlierDetector#traffic}),
 * so that probing stops for a service nobody calls. The status classes follow Envoy's
 * outlier detection (consecutive gateway failures: 502, 503, 504 and connection errors;
 * consecutive 5xx).
 *
 * <p>
 * Arguments may be {@code null} as Spring Cloud's callers pass them: a completion without
 * a chosen instance changes nothing. Thread-safe: the request count is a
 * {@link LongAdder}, the detector is thread-safe.
 *
 * @since 0.1.0
 */
public class OutlierLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

	private static final Logger log = LoggerFactory.getLogger(OutlierLifecycle.class);

	private final OutlierDetector detector;

	/**
	 * Requests to the service, counted before the choice (those that found no instance
	 * too): the detector stops probing for a service nobody calls any more.
	 */
	private final LongAdder requests = new LongAdder();

	/**
	 * Creates the feed of one service's outlier detection, and registers its request
	 * count as the detector's traffic.
	 * @param detector the detector fed; not {@code null}
	 */
	public OutlierLifecycle(OutlierDetector detector) {
		this.detector = Objects.requireNonNull(detector, "detector");
		detector.traffic(this.requests::sum);
	}

	@Override
	public void onStart(Request<Object> request) {
		this.requests.increment();
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		try {
			Response<ServiceInstance> response = completionContext.getLoadBalancerResponse();
			ServiceInstance server = BracketedHost.chosen(response);
			if (server == null) {
				return;
			}
			Throwable failure = completionContext.getThrowable();
			Outcome outcome = outcome(completionContext.status(), failure, completionContext.getClientResponse());
			if (outcome != Outcome.IGNORED) {
				this.detector.record(server, outcome,
						(outcome == Outcome.SUCCESS) ? null : describe(failure, completionContext.getClientResponse()));
			}
		}
		catch (RuntimeException ex) {
			// A callback must never hide the request's own outcome from the caller.
			CallbackFailures.swallowed(log, "onComplete", ex);
		}
	}

	/**
	 * What a completion tells of the instance.
	 * @param status the status Spring Cloud reports
	 * @param failure the exception, if any
	 * @param clientResponse the client's response object, if any
	 * @return the outcome
	 */
	static Outcome outcome(CompletionContext.Status status, @Nullable Throwable failure,
			@Nullable Object clientResponse) {
		if (status == CompletionContext.Status.DISCARD) {
			return Outcome.IGNORED;
		}
		if (failure != null) {
			if (!InstanceFailures.isInstanceFailure(failure)) {
				return Outcome.IGNORED;
			}
			return ConnectFailures.neverSent(failure) ? Outcome.UNREACHABLE : Outcome.GATEWAY_FAILURE;
		}
		int code = InstanceFailures.statusCode(clientResponse);
		if (code == 503) {
			return Outcome.OVERLOADED;
		}
		if (code == 502 || code == 504) {
			return Outcome.GATEWAY_FAILURE;
		}
		if (code >= 500 && code <= 599) {
			return Outcome.SERVER_ERROR;
		}
		return (status == CompletionContext.Status.SUCCESS) ? Outcome.SUCCESS : Outcome.IGNORED;
	}

	private static String describe(@Nullable Throwable failure, @Nullable Object clientResponse) {
		if (failure != null) {
			Throwable root = InstanceFailures.rootCause(failure);
			return root.getClass().getSimpleName() + ((root.getMessage() != null) ? ": " + root.getMessage() : "");
		}
		return "HTTP " + InstanceFailures.statusCode(clientResponse);
	}

}
