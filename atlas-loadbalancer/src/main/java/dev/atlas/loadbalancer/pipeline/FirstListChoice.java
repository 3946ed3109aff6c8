package dev.atlas.loadbalancer.pipeline;

import java.util.List;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
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
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * The one operator between a supplier chain and the {@code Mono}
 * {@link AtlasLoadBalancer#choose} returns: takes the first candidate list the chain
 * emits, cancels the chain, and emits the load balancer's response for that list; when
 * the chain completes without a list, emits an {@code EmptyResponse} instead. It does
 * what {@code flux.next().map(list -> respond(list)).defaultIfEmpty(EMPTY)} does, with
 * one publisher and one subscriber per request instead of three of each and no lambda (a
 * pick is on every call, so this is measured: see {@code atlas-benchmarks}). Errors of
 * the chain pass through; an exception thrown while choosing is signalled as an error.
 *
 * <p>
 * When the top of the chain is Atlas's own stage, {@code source} is the stage's delegate
 * and this operator applies the stage to the list itself ({@link ThroughStage},
 * {@link AtlasServiceInstanceListSupplier#select}), which saves the stage's own operator
 * per request; the result is the same as subscribing to the stage.
 *
 * <p>
 * Built on Reactor's {@link Operators.MonoSubscriber}, which handles request/value races,
 * cancellation and fusion of a single-value result. Stateless itself; each subscription
 * has its own subscriber.
 */
class FirstListChoice extends Mono<Response<ServiceInstance>> implements Scannable {

	/** Every reason, by ordinal (read only on the empty path). */
	private static final NoInstanceReason[] REASONS = NoInstanceReason.values();

	final @Nullable Request<?> request;

	final @Nullable RoutingContext onCallingThread;

	/** The load balancer, with the version of its routing read once for the request. */
	final AtlasLoadBalancer.Bound chooser;

	final ServiceInstanceListSupplier supplier;

	private final Flux<List<ServiceInstance>> source;

	/**
	 * @param source what {@code supplier} returned for the request
	 * @param request the request; may be {@code null}
	 * @param onCallingThread the routing context of the thread that asked for the choice;
	 * may be {@code null}
	 * @param chooser the load balancer with its routing read once for the request;
	 * chooses from a list ({@link AtlasLoadBalancer#respond})
	 * @param supplier the top of the chain, told the choice if it wants to know
	 */
	FirstListChoice(Flux<List<ServiceInstance>> source, @Nullable Request<?> request,
			@Nullable RoutingContext onCallingThread, AtlasLoadBalancer.Bound chooser,
			ServiceInstanceListSupplier supplier) {
		this.source = source;
		this.request = request;
		this.onCallingThread = onCallingThread;
		this.chooser = chooser;
		this.supplier = supplier;
	}

	/**
	 * The choice over what a supplier chain returned, through Reactor's assembly hooks
	 * (debug tracing).
	 * @param source what {@code supplier} returned for the request
	 * @param request the request; may be {@code null}
	 * @param chooser the load balancer with its routing read once for the request
	 * @param supplier the top of the chain
	 * @return the {@code Mono} of the response
	 */
	static Mono<Response<ServiceInstance>> over(Flux<List<ServiceInstance>> source, @Nullable Request<?> request,
			AtlasLoadBalancer.Bound chooser, ServiceInstanceListSupplier supplier) {
		return onAssembly(new FirstListChoice(source, request, null, chooser, supplier));
	}

	/**
	 * The choice over what a supplier chain returned that has Atlas's stage below its top
	 * (an application's supplier wraps it), through Reactor's assembly hooks.
	 * @param source what {@code supplier} returned for the request
	 * @param request the request; may be {@code null}
	 * @param chooser the load balancer with its routing read once for the request
	 * @param supplier the top of the chain
	 * @return the {@code Mono} of the response
	 */
	static Mono<Response<ServiceInstance>> overStage(Flux<List<ServiceInstance>> source, @Nullable Request<?> request,
			AtlasLoadBalancer.Bound chooser, ServiceInstanceListSupplier supplier) {
		return onAssembly(new OverStage(source, request, chooser, supplier));
	}

	/**
	 * The choice with Atlas's stage applied inline, through Reactor's assembly hooks.
	 * @param stage the stage of Atlas
	 * @param request the request; may be {@code null}
	 * @param onCallingThread the calling thread's routing context; may be {@code null}
	 * @param chooser the load balancer with its routing read once for the request;
	 * chooses from the stage's candidates
	 * @return the {@code Mono} of the response
	 */
	static Mono<Response<ServiceInstance>> throughStage(AtlasServiceInstanceListSupplier stage,
			@Nullable Request<?> request, @Nullable RoutingContext onCallingThread, AtlasLoadBalancer.Bound chooser) {
		return onAssembly(new ThroughStage(stage, request, onCallingThread, chooser));
	}

	/**
	 * The candidates in one list of {@code source}.
	 * @param list a list
	 * @param request the request as the stage's filters see it
	 * @return {@code list} itself here; what Atlas's stage makes of it in
	 * {@link ThroughStage}
	 */
	List<ServiceInstance> candidates(List<ServiceInstance> list, ChoiceSubscriber request) {
		return list;
	}

	@Override
	public void subscribe(CoreSubscriber<? super Response<ServiceInstance>> actual) {
		this.source.subscribe(subscriber(actual));
	}

	/**
	 * The subscriber of one request.
	 * @param actual the downstream subscriber
	 * @return a new subscriber
	 */
	ChoiceSubscriber subscriber(CoreSubscriber<? super Response<ServiceInstance>> actual) {
		return new ChoiceSubscriber(actual, this);
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
	 * context.
	 */
	static class ChoiceSubscriber extends Operators.MonoSubscriber<List<ServiceInstance>, Response<ServiceInstance>>
			implements AtlasLoadBalancer.Picking {

		private final FirstListChoice parent;

		private InstanceSnapshot candidates = InstanceSnapshot.EMPTY;

		private @Nullable Subscription upstream;

		// Why the stage left no candidate, as the reason's ordinal + 1 (0: not told). A
		// byte packs next to {@code done}; a reference would make every subscriber, so
		// every request, 8 bytes larger.
		private byte emptyReason;

		private boolean done;

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
		public void onNext(List<ServiceInstance> candidates) {
			if (this.done) {
				Operators.onNextDropped(candidates, currentContext());
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
				FirstListChoice p = this.parent;
				AtlasLoadBalancer.Bound chooser = p.chooser;
				response = chooser.balancer.respond(p.supplier, p.candidates(candidates, this), this, chooser.version);
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
			complete(this.parent.chooser.balancer.noInstance(NoInstanceReason.NO_INSTANCES));
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
			FirstListChoice p = this.parent;
			return RequestHeaders.resolve(p.request, RoutingHeaders.context(currentContext(), p.onCallingThread),
					lowerCaseName);
		}

		@Override
		public void candidates(InstanceSnapshot candidates) {
			this.candidates = candidates;
		}

		@Override
		public void emptyBecause(NoInstanceReason reason) {
			this.emptyReason = (byte) (reason.ordinal() + 1);
		}

		@Override
		public @Nullable NoInstanceReason emptyReason() {
			return (this.emptyReason != 0) ? REASONS[this.emptyReason - 1] : null;
		}

		@Override
		public int inFlight(int position) {
			return this.parent.chooser.balancer.stats.inFlight(this.candidates, position);
		}

		@Override
		public double latencyMillis(int position) {
			return this.parent.chooser.balancer.stats.latencyMillis(this.candidates, position);
		}

		@Override
		public double peakEwmaMillis(int position) {
			return this.parent.chooser.balancer.stats.peakEwmaMillis(this.candidates, position);
		}

		@Override
		public double peakEwmaMillis(int position, long nowNanos) {
			return this.parent.chooser.balancer.stats.peakEwmaMillis(this.candidates, position, nowNanos);
		}

		@Override
		public long nanoTime() {
			return this.parent.chooser.balancer.stats.nanoTime();
		}

		@Override
		public long serviceInFlight() {
			return this.parent.chooser.balancer.stats.serviceInFlight();
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
	 * The choice over a chain with Atlas's stage below its top, where the stage runs as a
	 * supplier of the chain, possibly on another thread: the version of the routing the
	 * load balancer read is put in the Reactor {@code Context} under its
	 * {@link ServicePipeline}, so that the stage applies that version and a request sees
	 * one version of the rules on this path too (at the cost of a {@code Context} per
	 * request, on this path only).
	 */
	static final class OverStage extends FirstListChoice {

		OverStage(Flux<List<ServiceInstance>> source, @Nullable Request<?> request, AtlasLoadBalancer.Bound chooser,
				ServiceInstanceListSupplier supplier) {
			super(source, request, null, chooser, supplier);
		}

		@Override
		ChoiceSubscriber subscriber(CoreSubscriber<? super Response<ServiceInstance>> actual) {
			return new VersionedChoiceSubscriber(actual, this);
		}

	}

	/**
	 * The subscriber of a chain with Atlas's stage below its top: its {@code Context}
	 * holds the version of the routing the load balancer read for the request.
	 */
	static final class VersionedChoiceSubscriber extends ChoiceSubscriber {

		private final Context context;

		VersionedChoiceSubscriber(CoreSubscriber<? super Response<ServiceInstance>> actual, FirstListChoice parent) {
			super(actual, parent);
			AtlasLoadBalancer.Bound chooser = parent.chooser;
			this.context = actual.currentContext().put(chooser.balancer.pipeline(), chooser.version);
		}

		@Override
		public Context currentContext() {
			return this.context;
		}

	}

	/**
	 * The choice with Atlas's stage applied inline: {@code source} is the stage's
	 * delegate, and the stage is the supplier told the choice (when Spring's retry-aware
	 * supplier is on top of it, that one would only pass the call on to the stage).
	 */
	static final class ThroughStage extends FirstListChoice {

		/**
		 * @param stage the stage of Atlas; {@code source} is what its delegate returns
		 * for the request
		 * @param request the request; may be {@code null}
		 * @param onCallingThread the calling thread's routing context; may be
		 * {@code null}
		 * @param chooser the load balancer with its routing for the request
		 */
		ThroughStage(AtlasServiceInstanceListSupplier stage, @Nullable Request<?> request,
				@Nullable RoutingContext onCallingThread, AtlasLoadBalancer.Bound chooser) {
			super(stage.delegateLists(request), request, onCallingThread, chooser, stage);
		}

		/**
		 * The stage applied with the version the load balancer read when the two share
		 * their {@link ServicePipeline} (as Atlas's auto-configuration builds them), else
		 * with the stage's own version in force.
		 */
		@Override
		List<ServiceInstance> candidates(List<ServiceInstance> list, ChoiceSubscriber request) {
			AtlasServiceInstanceListSupplier stage = (AtlasServiceInstanceListSupplier) this.supplier;
			AtlasLoadBalancer.Bound chooser = this.chooser;
			ServicePipeline pipeline = stage.pipeline();
			return stage.select(list, request,
					(pipeline == chooser.balancer.pipeline()) ? chooser.version : pipeline.current());
		}

	}

}
