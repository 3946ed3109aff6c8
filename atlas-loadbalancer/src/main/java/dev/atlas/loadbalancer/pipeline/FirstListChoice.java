package dev.atlas.loadbalancer.pipeline;

import java.util.List;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * The one operator between a supplier chain and the {@code Mono}
 * {@link AtlasLoadBalancer#choose} returns: takes the first candidate list the chain
 * emits, cancels the chain, and emits the {@link Chooser}'s response for that list; when
 * the chain completes without a list, emits the chooser's empty response instead. It does
 * what {@code flux.next().map(list -> respond(list)).defaultIfEmpty(EMPTY)} does, with
 * one publisher and one subscriber per request instead of three of each and no lambda (a
 * pick is on every call, so this is measured: see {@code atlas-benchmarks}). Errors of
 * the chain pass through; an exception thrown while choosing is signalled as an error.
 *
 * <p>
 * The operator talks to one collaborator, the {@link Chooser} of the request's version:
 * when Atlas's stage tops the chain, {@code source} is the stage's delegate and the
 * chooser applies the stage to the list itself, which saves the stage's own operator per
 * request; the result is the same as subscribing to the stage.
 *
 * <p>
 * Built on Reactor's {@link Operators.MonoSubscriber}, which handles request/value races,
 * cancellation and fusion of a single-value result. Immutable itself; each subscription
 * has its own subscriber.
 */
final class FirstListChoice extends Mono<Response<ServiceInstance>> implements Scannable {

	private final Flux<List<ServiceInstance>> source;

	private final @Nullable Request<?> request;

	private final @Nullable RoutingContext onCallingThread;

	private final Chooser chooser;

	private FirstListChoice(Flux<List<ServiceInstance>> source, @Nullable Request<?> request,
			@Nullable RoutingContext onCallingThread, Chooser chooser) {
		this.source = source;
		this.request = request;
		this.onCallingThread = onCallingThread;
		this.chooser = chooser;
	}

	/**
	 * The choice over the lists of a chain, through Reactor's assembly hooks (debug
	 * tracing).
	 * @param source the lists for the request: what the top of the chain returned, or
	 * what the delegate of Atlas's stage returned when the chooser applies the stage
	 * inline
	 * @param request the request; may be {@code null}
	 * @param onCallingThread the routing context of the thread that asked for the choice
	 * when the stage runs inline, {@link RoutingContext#EMPTY} when that thread had none;
	 * {@code null} when the stage is subscribed to as a supplier (it reads the thread
	 * itself)
	 * @param chooser the version of the routing read once for the request: chooses from
	 * the first list
	 * @return the {@code Mono} of the response
	 */
	static Mono<Response<ServiceInstance>> of(Flux<List<ServiceInstance>> source, @Nullable Request<?> request,
			@Nullable RoutingContext onCallingThread, Chooser chooser) {
		return onAssembly(new FirstListChoice(source, request, onCallingThread, chooser));
	}

	@Override
	public void subscribe(CoreSubscriber<? super Response<ServiceInstance>> actual) {
		this.source.subscribe(this.chooser.carriesVersion() ? new VersionedChoiceSubscriber(actual, this)
				: new ChoiceSubscriber(actual, this));
	}

	@Override
	public @Nullable Object scanUnsafe(Attr key) {
		if (key == Attr.PARENT) {
			return this.source;
		}
		if (key == Attr.RUN_STYLE) {
			return Attr.RunStyle.SYNC;
		}
		return null;
	}

	/**
	 * Subscribes to the chain for one request, and is the request that filters and the
	 * strategy see (no object of its own per request): headers are resolved from the
	 * request, this subscriber's Reactor {@code Context} and the calling thread's routing
	 * context; it holds the candidates the strategy's positions refer to, and asks the
	 * {@link Chooser} for their live statistics.
	 */
	static class ChoiceSubscriber extends Operators.MonoSubscriber<List<ServiceInstance>, Response<ServiceInstance>>
			implements ChoiceRequest {

		private final FirstListChoice parent;

		private InstanceSnapshot candidates = InstanceSnapshot.EMPTY;

		private @Nullable Subscription upstream;

		private boolean done;

		/** Whether {@link #context} was looked up (on the first header read). */
		private boolean contextResolved;

		/** The routing context the request's headers fall back on. */
		private @Nullable RoutingContext context;

		ChoiceSubscriber(CoreSubscriber<? super Response<ServiceInstance>> actual, FirstListChoice parent) {
			super(actual);
			this.parent = parent;
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			if (Operators.validate(this.upstream, subscription)) {
				this.upstream = subscription;
				this.actual.onSubscribe(this);
				if (!isCancelled()) {
					subscription.request(Long.MAX_VALUE);
				}
			}
		}

		@Override
		public void onNext(List<ServiceInstance> list) {
			if (this.done) {
				Operators.onNextDropped(list, currentContext());
				return;
			}
			this.done = true;
			Subscription subscription = this.upstream;
			if (subscription != null) {
				subscription.cancel();
			}
			if (isCancelled()) {
				// Nobody wants the answer: choose nothing, so that no supplier is told of
				// a choice not used.
				return;
			}
			Response<ServiceInstance> response;
			try {
				response = this.parent.chooser.respond(list, this);
			}
			catch (Throwable ex) {
				this.actual.onError(Operators.onOperatorError(ex, currentContext()));
				return;
			}
			complete(response);
		}

		@Override
		public void onError(Throwable error) {
			if (this.done) {
				Operators.onErrorDropped(error, currentContext());
				return;
			}
			this.done = true;
			this.actual.onError(error);
		}

		@Override
		public void onComplete() {
			if (this.done) {
				return;
			}
			this.done = true;
			complete(this.parent.chooser.noList());
		}

		@Override
		public void cancel() {
			super.cancel();
			Subscription subscription = this.upstream;
			if (subscription != null) {
				subscription.cancel();
			}
		}

		@Override
		public @Nullable Request<?> request() {
			return this.parent.request;
		}

		@Override
		public @Nullable String header(String lowerCaseName) {
			if (!this.contextResolved) {
				this.context = RoutingHeaders.context(currentContext(), this.parent.onCallingThread);
				this.contextResolved = true;
			}
			return RequestHeaders.resolve(this.parent.request, this.context, lowerCaseName);
		}

		@Override
		public void candidates(InstanceSnapshot candidates) {
			this.candidates = candidates;
		}

		@Override
		public InstanceSnapshot candidates() {
			return this.candidates;
		}

		@Override
		public Chooser chooser() {
			return this.parent.chooser;
		}

		@Override
		public @Nullable Object scanUnsafe(Attr key) {
			if (key == Attr.PARENT) {
				return this.upstream;
			}
			if (key == Attr.TERMINATED) {
				return this.done;
			}
			return super.scanUnsafe(key);
		}

	}

	/**
	 * The subscriber of a chain with Atlas's stage below its top: its {@code Context}
	 * holds the version of the routing read for the request
	 * ({@link Chooser#carriesVersion()}).
	 */
	static final class VersionedChoiceSubscriber extends ChoiceSubscriber {

		private final Context context;

		VersionedChoiceSubscriber(CoreSubscriber<? super Response<ServiceInstance>> actual, FirstListChoice parent) {
			super(actual, parent);
			this.context = parent.chooser.withVersion(actual.currentContext());
		}

		@Override
		public Context currentContext() {
			return this.context;
		}

	}

}
