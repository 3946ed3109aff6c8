package dev.atlas.autoconfigure.gateway;

import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.overload.Retries;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycleValidator;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.gateway.config.GatewayLoadBalancerProperties;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;

/**
 * Spring Cloud Gateway's load-balancer filter, except that:
 * <ul>
 * <li>an exchange cancelled while its request is in flight (the client closed the
 * connection, a client or gateway timeout, a closed SSE stream) completes the request's
 * lifecycle as failed with a {@link CancellationException}. Spring Cloud's filter
 * completes it only on a response or an error, so each such request stayed counted in
 * flight on its instance for ever, and {@code least-request}, {@code peak-ewma} and
 * bounded load shunned the instance. Outlier detection ignores cancellations;</li>
 * <li>an instance whose host is an IPv6 literal listed without brackets is reached for
 * percent-encoded and non-ASCII paths and queries too (see {@link BracketedHost});</li>
 * <li>an attempt of the gateway's {@code Retry} filter after the first asks the service's
 * retry budget; a refused one is not made: the exchange ends as the attempt before it
 * did, with its error (a refused connection, say) or its status (a 503, without the
 * body), and the later attempts the {@code Retry} filter still makes end the same way at
 * once, without asking again. An answer that carries the overload marker
 * ({@value OverloadMarks#HEADER}: an Atlas application below gave up for overload) is not
 * retried, at no cost to the budget, and the marker is removed from what the gateway
 * answers.</li>
 * </ul>
 * Put in place of Spring Cloud's filter (matched by exact class: an application's own
 * subclass is kept) by {@link AtlasGatewayAutoConfiguration}. Thread-safe.
 *
 * @since 0.1.0
 */
public class AtlasGatewayLoadBalancerFilter extends ReactiveLoadBalancerClientFilter {

	/** The exchange attribute holding the error of its last attempt, if it failed so. */
	static final String LAST_FAILURE_ATTRIBUTE = AtlasGatewayLoadBalancerFilter.class.getName() + ".lastFailure";

	/**
	 * The exchange attribute set when the answer of its last attempt carried the overload
	 * marker.
	 */
	static final String LAST_MARKED_ATTRIBUTE = AtlasGatewayLoadBalancerFilter.class.getName() + ".lastMarked";

	/** The exchange attribute set when the retry budget refused one of its attempts. */
	static final String RETRY_REFUSED_ATTRIBUTE = AtlasGatewayLoadBalancerFilter.class.getName() + ".retryRefused";

	private static final Log logger = LogFactory.getLog(AtlasGatewayLoadBalancerFilter.class);

	private final LoadBalancerClientFactory clientFactory;

	/**
	 * Creates the filter.
	 * @param clientFactory the load balancers of every service
	 * @param properties the gateway's load-balancer properties
	 */
	public AtlasGatewayLoadBalancerFilter(LoadBalancerClientFactory clientFactory,
			GatewayLoadBalancerProperties properties) {
		super(clientFactory, properties);
		this.clientFactory = clientFactory;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		if (url == null || url.getHost() == null || !("lb".equals(url.getScheme())
				|| "lb".equals(exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR)))) {
			// not balanced: the gateway's filter passes it on
			return super.filter(exchange, chain);
		}
		String serviceId = url.getHost();
		if (isRetry(exchange)) {
			if (!retryAllowed(exchange, serviceId)) {
				return refused(exchange);
			}
			exchange.getAttributes().remove(LAST_FAILURE_ATTRIBUTE);
			// Spring Cloud's filter completes a choice that fails (no instance) with the
			// response under its attribute: the previous attempt's, already completed.
			// Moved where retry avoidance finds it, so that it is not completed twice.
			Object previous = exchange.getAttributes()
				.remove(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR);
			if (previous != null) {
				exchange.getAttributes().put(GatewayRetryAvoidance.PREVIOUS_RESPONSE_ATTRIBUTE, previous);
			}
		}
		Attempt attempt = new Attempt(serviceId, exchange);
		GatewayFilterChain tracking = (forwarded) -> chain.filter(forwarded)
			.doOnSubscribe((subscription) -> attempt.started())
			.doOnError((error) -> forwarded.getAttributes().put(LAST_FAILURE_ATTRIBUTE, error))
			.doOnSuccess((done) -> {
				forwarded.getAttributes().remove(LAST_FAILURE_ATTRIBUTE);
				// Read now (the Retry filter removes the answer's headers before the next
				// attempt) and removed: never forwarded to the gateway's client. Nothing
				// is
				// written before the whole chain completes.
				if (OverloadMarks.isMarked(forwarded.getResponse().getHeaders().getFirst(OverloadMarks.HEADER))) {
					forwarded.getResponse().getHeaders().remove(OverloadMarks.HEADER);
					forwarded.getAttributes().put(LAST_MARKED_ATTRIBUTE, Boolean.TRUE);
				}
				else {
					forwarded.getAttributes().remove(LAST_MARKED_ATTRIBUTE);
				}
			})
			.doOnTerminate(attempt::ended);
		return super.filter(exchange, tracking).doOnCancel(attempt::cancelled);
	}

	/**
	 * Ends a refused attempt as the attempt before it ended: with its error, or with its
	 * status (503 when it left none that says so: it failed before reaching an instance).
	 */
	private static Mono<Void> refused(ServerWebExchange exchange) {
		Throwable failure = exchange.getAttribute(LAST_FAILURE_ATTRIBUTE);
		if (failure != null) {
			return Mono.error(failure);
		}
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		if (status == null || !status.isError()) {
			exchange.getResponse().setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
		}
		return Mono.empty();
	}

	/** Whether an earlier attempt of this exchange chose an instance. */
	private static boolean isRetry(ServerWebExchange exchange) {
		return exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR) != null
				|| exchange.getAttribute(GatewayRetryAvoidance.PREVIOUS_RESPONSE_ATTRIBUTE) != null;
	}

	/**
	 * Asks the service's retry budget for this attempt, once per exchange: a refusal
	 * stands for the exchange's later attempts.
	 */
	private boolean retryAllowed(ServerWebExchange exchange, String serviceId) {
		if (exchange.getAttribute(RETRY_REFUSED_ATTRIBUTE) != null) {
			return false;
		}
		if (exchange.getAttribute(LAST_MARKED_ATTRIBUTE) != null) {
			// an Atlas application below gave up for overload: not retried, at no cost
			logger.debug("Retry not made: the answer says " + OverloadMarks.HEADER);
			exchange.getAttributes().put(RETRY_REFUSED_ATTRIBUTE, Boolean.TRUE);
			return false;
		}
		Object failure = exchange.getAttribute(LAST_FAILURE_ATTRIBUTE);
		if (Retries.tryRetry(Retries.budget(this.clientFactory, serviceId), serviceId,
				exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath(),
				(failure != null) ? failure : "status " + exchange.getResponse().getStatusCode())) {
			return true;
		}
		exchange.getAttributes().put(RETRY_REFUSED_ATTRIBUTE, Boolean.TRUE);
		return false;
	}

	@Override
	protected URI reconstructURI(ServiceInstance serviceInstance, URI original) {
		return super.reconstructURI(BracketedHost.forUri(serviceInstance), original);
	}

	/**
	 * One call of the filter: in flight from the subscription to the rest of the chain
	 * (after the filter chose an instance and started the request's lifecycle) to its
	 * end.
	 */
	private final class Attempt {

		private final String serviceId;

		private final ServerWebExchange exchange;

		private @Nullable Response<ServiceInstance> inFlight;

		Attempt(String serviceId, ServerWebExchange exchange) {
			this.serviceId = serviceId;
			this.exchange = exchange;
		}

		synchronized void started() {
			Response<ServiceInstance> response = this.exchange
				.getAttribute(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR);
			this.inFlight = (response != null && response.hasServer()) ? response : null;
		}

		synchronized void ended() {
			this.inFlight = null;
		}

		@SuppressWarnings({ "rawtypes", "unchecked" })
		void cancelled() {
			Response<ServiceInstance> response;
			synchronized (this) {
				response = this.inFlight;
				this.inFlight = null;
			}
			if (response == null) {
				return;
			}
			Set<LoadBalancerLifecycle> lifecycles = LoadBalancerLifecycleValidator.getSupportedLifecycleProcessors(
					AtlasGatewayLoadBalancerFilter.this.clientFactory.getInstances(this.serviceId,
							LoadBalancerLifecycle.class),
					RequestDataContext.class, ResponseData.class, ServiceInstance.class);
			// The gateway's filter keeps its request object to itself: the completion
			// carries an
			// equal one (same request data and hint, no start time: a cancelled request's
			// duration is no latency of the instance).
			String serviceId = this.serviceId;
			Map<String, String> hints = AtlasGatewayLoadBalancerFilter.this.clientFactory.getProperties(serviceId)
				.getHint();
			String hint = hints.getOrDefault(serviceId, hints.getOrDefault("default", "default"));
			CompletionContext completion = new CompletionContext<>(CompletionContext.Status.FAILED,
					new CancellationException("The client went away before the gateway's answer"),
					new DefaultRequest<>(new RequestDataContext(
							new RequestData(this.exchange.getRequest(), this.exchange.getAttributes()), hint)),
					response);
			for (LoadBalancerLifecycle lifecycle : lifecycles) {
				try {
					lifecycle.onComplete(completion);
				}
				catch (RuntimeException ex) {
					// One lifecycle's failure must not keep the others from completing.
					logger.debug("A load-balancer lifecycle failed to complete a cancelled exchange", ex);
				}
			}
		}

	}

}
