package dev.atlas.autoconfigure.client;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.function.BiFunction;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.overload.Retries;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycleValidator;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.client.loadbalancer.reactive.ReactorLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableLoadBalancerExchangeFilterFunction;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Spring Cloud's WebClient load-balancer filters, except that:
 * <ul>
 * <li>when Atlas chooses no instance the exchange fails with a
 * {@link NoInstanceAvailableException} naming the service and the reason (after the
 * {@code DISCARD} lifecycle callbacks), instead of answering a 503 whose body says
 * neither the reason nor, with retry, being retried until {@code Retries exhausted}. The
 * exception is not retryable (it is no I/O error), so a retrying filter passes it on at
 * once;</li>
 * <li>an exchange cancelled while in flight (the caller's {@code timeout(…)}, a
 * {@code zip} that lost a branch, a client that went away) completes its request
 * lifecycle as failed with a {@link CancellationException}, which Spring Cloud's filters
 * never do (they complete only on a response or an error): the request would stay counted
 * in flight for ever, and {@code least-request}, {@code peak-ewma} and bounded load would
 * shun the instance. Outlier detection ignores cancellations;</li>
 * <li>the retrying filter asks the service's retry budget before each retry, and retries
 * a request after an exception only when its method allows it (GET, every method with
 * {@code retry-on-all-operations}, or any method when nothing reached the server; Spring
 * Cloud's filter retried every method). A refused retry is not made: after a status, the
 * caller gets that answer; after an exception, that exception, wrapped by the retry
 * specification as when a retry fails ({@code Retries exhausted}).</li>
 * </ul>
 * Put in place of Spring Cloud's filters by {@link AtlasClientAutoConfiguration}.
 *
 * @since 0.1.0
 */
public final class AtlasReactiveNoInstanceFilters {

	private AtlasReactiveNoInstanceFilters() {
	}

	static <C extends RequestDataContext> Mono<Response<ServiceInstance>> failIfNone(
			ReactiveLoadBalancer.Factory<ServiceInstance> factory, String serviceId, Request<C> request,
			Mono<Response<ServiceInstance>> chosen) {
		// map, throwing (Reactor signals it as the error): one operator and no inner Mono
		// per request, and no ThreadLocal restoration (which handle gets from Reactor
		// when context-propagation is on the class path)
		return chosen.map((response) -> {
			NoInstanceAvailableException none = NoInstanceErrors.discarded(factory, serviceId, request, response);
			if (none != null) {
				throw none;
			}
			return bracketed(response);
		});
	}

	/**
	 * The chosen instance as Spring Cloud's filter builds the request's URI from it: with
	 * its host in brackets when it is an IPv6 literal listed without them (see
	 * {@link BracketedHost}). The lifecycle callbacks see that view too; Atlas's own look
	 * the listed instance up behind it.
	 */
	private static Response<ServiceInstance> bracketed(Response<ServiceInstance> response) {
		ServiceInstance server = response.getServer();
		if (server == null) {
			return response;
		}
		ServiceInstance forUri = BracketedHost.forUri(server);
		return (forUri == server) ? response : new DefaultResponse(forUri);
	}

	/**
	 * Runs {@code exchange} tracking {@link Attempt}s, so that a cancellation completes.
	 */
	static Mono<ClientResponse> tracked(ClientRequest clientRequest, ExchangeFunction next, Attempt attempt,
			BiFunction<ClientRequest, ExchangeFunction, Mono<ClientResponse>> exchange) {
		ExchangeFunction tracking = (request) -> next.exchange(request)
			.doOnNext(attempt::answered)
			.doOnSubscribe((subscription) -> attempt.started())
			.doOnError(attempt::failed)
			.doOnTerminate(attempt::ended);
		return exchange.apply(clientRequest, tracking).contextWrite((context) -> {
			attempt.inbound(context);
			return context.put(Attempt.class, attempt);
		}).doOnCancel(attempt::cancelled);
	}

	/**
	 * Tells the filter call's {@link Attempt} which instance was chosen, or that the
	 * choice failed (every instance full: the inbound request's answer is marked).
	 */
	static Mono<Response<ServiceInstance>> remember(Request<?> request, Mono<Response<ServiceInstance>> chosen) {
		return Mono.deferContextual((context) -> {
			Attempt attempt = context.getOrDefault(Attempt.class, null);
			return (attempt != null)
					? chosen.doOnNext((response) -> attempt.chosen(request, response)).doOnError(attempt::choiceFailed)
					: chosen;
		});
	}

	/**
	 * The exchange of one filter call whose lifecycle a cancellation completes: the
	 * attempt chosen last, in flight from the start of its exchange to its end.
	 * Thread-safe.
	 */
	static final class Attempt {

		private final String serviceId;

		private final Class<?> contextType;

		private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

		private @Nullable Request<?> request;

		private @Nullable Response<ServiceInstance> response;

		private boolean inFlight;

		/**
		 * The overload marker of the inbound request the call is made for, captured on
		 * the calling thread or from the Reactor context ({@code null} outside one).
		 */
		private @Nullable Runnable mark;

		/** The method of the request, for the retry rules. */
		private final @Nullable HttpMethod method;

		/** The last exchange's error; {@code null} after an answer. */
		private @Nullable Throwable failure;

		/** The failure whose retry was refused, given again to any later retry. */
		private @Nullable Throwable refused;

		/** Whether a retry of this call was refused (by its method or the budget). */
		private boolean refusedAny;

		/** Retries this call was granted, after an exception or a status. */
		private int retries;

		/** Whether a choice found every instance full. */
		private boolean saturated;

		/** Whether the last answer carries the overload marker. */
		private boolean answerMarked;

		/** Set when the retry policy granted a retry after a status: the next choice. */
		private boolean statusRetryGranted;

		Attempt(String serviceId, Class<?> contextType, ReactiveLoadBalancer.Factory<ServiceInstance> factory,
				@Nullable HttpMethod method) {
			this.serviceId = serviceId;
			this.contextType = contextType;
			this.factory = factory;
			this.method = method;
			this.mark = OverloadMarks.current();
		}

		/**
		 * The call is subscribed: in a WebFlux application, the mark of the inbound
		 * request it is made for is in the Reactor context
		 * ({@link OverloadMarks#CONTEXT_KEY}).
		 */
		synchronized void inbound(ContextView context) {
			if (this.mark == null) {
				this.mark = context.getOrDefault(OverloadMarks.CONTEXT_KEY, null);
			}
		}

		synchronized void chosen(Request<?> request, Response<ServiceInstance> response) {
			this.request = request;
			this.response = response;
			this.inFlight = false;
		}

		synchronized void failed(Throwable error) {
			this.failure = error;
		}

		/**
		 * An answer came: whether it carries the overload marker ({@link OverloadMarks}:
		 * an Atlas application below gave up for overload) decides its retry.
		 */
		synchronized void answered(ClientResponse answer) {
			this.answerMarked = OverloadMarks.isMarked(answer.headers().asHttpHeaders().getFirst(OverloadMarks.HEADER));
			if (this.retries > 0) {
				LoadBalancerProperties properties = this.factory.getProperties(this.serviceId);
				if (properties != null && this.retries >= properties.getRetry().getMaxRetriesOnNextServiceInstance()
						&& properties.getRetry().getRetryableStatusCodes().contains(answer.statusCode().value())) {
					// its last retry answered with a retryable status too: overload seen
					// here, which the caller above need not retry again
					OverloadMarks.mark(this.mark);
				}
			}
		}

		/**
		 * A choice failed: when every instance was at the per-instance in-flight limit,
		 * no retry of this call is made
		 * ({@link NoInstanceAvailableException#isSaturated}), whatever Spring Cloud's
		 * retryable exceptions say.
		 */
		synchronized void choiceFailed(Throwable error) {
			if (NoInstanceAvailableException.isSaturated(error)) {
				this.refused = error;
				this.saturated = true;
				OverloadMarks.mark(this.mark);
			}
		}

		/**
		 * Whether a choice of this call found every instance at the per-instance
		 * in-flight limit: the call is not retried.
		 * @return {@code true} once it did
		 */
		synchronized boolean saturated() {
			return this.saturated;
		}

		/**
		 * Decides a retry after an answer with a retryable status, when Spring Cloud's
		 * retry policy is asked (the status and the method allow it): allowed while this
		 * call has had fewer retries than the filter makes
		 * ({@code max-retries-on-next-service-instance}, which counts retries after an
		 * exception too), the answer does not carry the overload marker, and the budget
		 * covers it. A refusal stands for the rest of the call, and is counted once.
		 * @return {@code true} to retry
		 */
		synchronized boolean grantStatusRetry() {
			if (this.refusedAny || this.answerMarked) {
				return false;
			}
			LoadBalancerProperties properties = this.factory.getProperties(this.serviceId);
			int max = (properties != null) ? properties.getRetry().getMaxRetriesOnNextServiceInstance() : 1;
			if (this.retries >= max) {
				return false;
			}
			if (!Retries.tryRetry(Retries.budget(this.factory, this.serviceId), this.serviceId,
					this.method + " to " + this.serviceId, "an answer with a retryable status")) {
				this.refusedAny = true;
				OverloadMarks.mark(this.mark);
				return false;
			}
			this.retries++;
			this.statusRetryGranted = true;
			return true;
		}

		/**
		 * Decides a retry after an exception, when the retrying filter chooses again: the
		 * method must allow it (GET, every method with {@code retry-on-all-operations},
		 * or any method when nothing reached the server) and the service's retry budget
		 * must cover it. A retry after an answer with a retryable status was decided when
		 * the retry policy was asked ({@link #grantStatusRetry()}).
		 * @return {@code null} to make the retry; otherwise the failure to give the
		 * caller instead (the one the retry was for)
		 */
		synchronized @Nullable Throwable refusal() {
			if (this.refused != null) {
				return this.refused;
			}
			if (this.request == null) {
				return null;
			}
			if (this.statusRetryGranted) {
				this.statusRetryGranted = false;
				return null;
			}
			Throwable previous = this.failure;
			if (previous == null) {
				return null;
			}
			this.failure = null;
			LoadBalancerProperties properties = this.factory.getProperties(this.serviceId);
			boolean onAll = properties != null && properties.getRetry().isRetryOnAllOperations();
			if (!this.refusedAny
					&& Retries.methodAllows((this.method != null) ? this.method.name() : null, onAll, previous)) {
				if (Retries.tryRetry(Retries.budget(this.factory, this.serviceId), this.serviceId,
						this.method + " to " + this.serviceId, previous)) {
					this.retries++;
					return null;
				}
				OverloadMarks.mark(this.mark);
			}
			this.refusedAny = true;
			this.refused = previous;
			return previous;
		}

		synchronized void started() {
			this.inFlight = this.request != null && this.response != null && this.response.hasServer();
		}

		synchronized void ended() {
			this.inFlight = false;
		}

		@SuppressWarnings({ "rawtypes", "unchecked" })
		void cancelled() {
			Request<?> cancelledRequest;
			Response<ServiceInstance> cancelledResponse;
			synchronized (this) {
				if (!this.inFlight) {
					return;
				}
				this.inFlight = false;
				cancelledRequest = this.request;
				cancelledResponse = this.response;
			}
			Set<LoadBalancerLifecycle> lifecycles = LoadBalancerLifecycleValidator.getSupportedLifecycleProcessors(
					this.factory.getInstances(this.serviceId, LoadBalancerLifecycle.class), this.contextType,
					ResponseData.class, ServiceInstance.class);
			CompletionContext completion = new CompletionContext<>(CompletionContext.Status.FAILED,
					new CancellationException("The caller cancelled the exchange"),
					(Request) Objects.requireNonNull(cancelledRequest, "in flight"), cancelledResponse);
			for (LoadBalancerLifecycle lifecycle : lifecycles) {
				lifecycle.onComplete(completion);
			}
		}

	}

	/**
	 * The filter without retry ({@code spring.cloud.loadbalancer.retry.enabled=false}).
	 */
	public static final class Plain extends ReactorLoadBalancerExchangeFilterFunction {

		private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

		/**
		 * Creates the filter.
		 * @param factory the load balancers of every service
		 * @param transformers the transformers of the outbound request
		 */
		public Plain(ReactiveLoadBalancer.Factory<ServiceInstance> factory,
				List<LoadBalancerClientRequestTransformer> transformers) {
			super(factory, transformers);
			this.factory = factory;
		}

		@Override
		public Mono<ClientResponse> filter(ClientRequest clientRequest, ExchangeFunction next) {
			return tracked(clientRequest, next,
					new Attempt(clientRequest.url().getHost(), RequestDataContext.class, this.factory, null),
					super::filter);
		}

		@Override
		protected Mono<Response<ServiceInstance>> choose(String serviceId, Request<RequestDataContext> request) {
			return remember(request, failIfNone(this.factory, serviceId, request, super.choose(serviceId, request)));
		}

	}

	/** The retrying filter (Atlas's default). */
	public static final class Retrying extends RetryableLoadBalancerExchangeFilterFunction {

		private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

		/**
		 * Creates the filter.
		 * @param retryPolicyFactory the retry policy of each service
		 * @param factory the load balancers of every service
		 * @param transformers the transformers of the outbound request
		 */
		public Retrying(LoadBalancerRetryPolicy.Factory retryPolicyFactory,
				ReactiveLoadBalancer.Factory<ServiceInstance> factory,
				List<LoadBalancerClientRequestTransformer> transformers) {
			super(new BudgetedRetryPolicies(retryPolicyFactory, factory), factory, transformers);
			this.factory = factory;
		}

		/**
		 * Runs Spring Cloud's retrying filter with this call's {@link Attempt}, which the
		 * retry policy of the call ({@link BudgetedRetryPolicies}, created by the filter
		 * as it starts, on this thread) is bound to.
		 */
		@Override
		public Mono<ClientResponse> filter(ClientRequest clientRequest, ExchangeFunction next) {
			Attempt attempt = new Attempt(clientRequest.url().getHost(), RetryableRequestContext.class, this.factory,
					clientRequest.method());
			BudgetedRetryPolicies.BINDING.set(attempt);
			try {
				return tracked(clientRequest, next, attempt, super::filter);
			}
			finally {
				BudgetedRetryPolicies.BINDING.remove();
			}
		}

		/**
		 * Chooses, except for a retry that the method or the retry budget refuses: that
		 * fails with the failure it was for (which the retry specification, having no
		 * retry left to give it, passes on as {@code Retries exhausted}, as when a retry
		 * fails).
		 */
		@Override
		protected Mono<Response<ServiceInstance>> choose(String serviceId, Request<RetryableRequestContext> request) {
			return Mono.deferContextual((context) -> {
				Attempt attempt = context.getOrDefault(Attempt.class, null);
				Throwable refusal = (attempt != null) ? attempt.refusal() : null;
				if (refusal != null) {
					return Mono.error(refusal);
				}
				Mono<Response<ServiceInstance>> chosen = failIfNone(this.factory, serviceId, request,
						super.choose(serviceId, request));
				return (attempt != null) ? chosen.doOnNext((response) -> attempt.chosen(request, response))
					.doOnError(attempt::choiceFailed) : chosen;
			});
		}

	}

}
