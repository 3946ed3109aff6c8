package dev.atlas.loadbalancer.pipeline;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * One choice made for a caller that waits for it
 * ({@link AtlasLoadBalancer#chooseAndWait}, what Atlas's blocking client calls):
 * subscribes to the supplier chain's lists itself, turns the first one into the
 * {@link Chooser}'s response, cancels the chain, and hands the response to the calling
 * thread. The result is what {@code AtlasLoadBalancer.choose(request).block()} returns,
 * without the {@code Mono} in between (its operator and its subscriber's request/complete
 * state machine) and without what {@code block()} costs when Reactor's automatic context
 * propagation is on (a snapshot of every registered {@code ThreadLocal} per call).
 *
 * <p>
 * It subscribes with {@code subscribe(CoreSubscriber)}, as Reactor's operators do (no
 * last-operator hook, no wrapping). Its {@code Context} holds the calling thread's
 * routing context (the one {@code ThreadLocal} a choice reads, read once per call) under
 * {@link RoutingContextHolder#KEY}, and the version read for the request when the stage
 * runs below the top of the chain ({@link Chooser#carriesVersion}); nothing else. When
 * the candidate list is at hand (the usual case: the supplier chain's cache answers at
 * once) the response arrives on the calling thread during {@code subscribe} and nothing
 * waits or synchronizes; else the thread waits on a latch, made then, which the
 * publishing thread opens after writing the result. One object per call when the list is
 * at hand, two more when waiting.
 */
final class AwaitedChoice implements CoreSubscriber<List<ServiceInstance>>, ChoiceRequest {

	private static final VarHandle LATCH;

	private static final VarHandle UPSTREAM;

	static {
		try {
			MethodHandles.Lookup lookup = MethodHandles.lookup();
			LATCH = lookup.findVarHandle(AwaitedChoice.class, "latch", CountDownLatch.class);
			UPSTREAM = lookup.findVarHandle(AwaitedChoice.class, "upstream", Subscription.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final Chooser chooser;

	private final @Nullable Request<?> request;

	private final @Nullable RoutingContext routing;

	private final Context context;

	/** The thread that waits: a result it publishes itself needs no latch. */
	private final Thread caller;

	/**
	 * The chain's subscription: written plainly when the chain subscribes on the calling
	 * thread (during {@code subscribe}, the usual case), else with a volatile write, and
	 * read with a volatile read by a caller that stops waiting.
	 */
	private @Nullable Subscription upstream;

	/**
	 * Set by the calling thread when it stops waiting (interrupted, or on an event loop):
	 * a list that still arrives is not chosen from, so that no supplier is told of a
	 * choice nobody uses.
	 */
	private volatile boolean cancelled;

	/** Whether a list, an error or the completion arrived (signals are serial). */
	private boolean done;

	private InstanceSnapshot candidates = InstanceSnapshot.EMPTY;

	private @Nullable Response<ServiceInstance> response;

	private @Nullable Throwable error;

	/** Written and read by the calling thread only: it published the result itself. */
	private boolean publishedByCaller;

	/**
	 * The latch of a result published by another thread, made by whichever of the two
	 * threads needs it first ({@link #latch()}); never made when the result arrives
	 * during {@code subscribe}.
	 */
	private volatile @Nullable CountDownLatch latch;

	private AwaitedChoice(Chooser chooser, @Nullable Request<?> request, @Nullable RoutingContext routing) {
		this.chooser = chooser;
		this.request = request;
		this.routing = routing;
		Context base = (routing != null) ? Context.of(RoutingContextHolder.KEY, routing) : Context.empty();
		this.context = chooser.carriesVersion() ? chooser.withVersion(base) : base;
		this.caller = Thread.currentThread();
	}

	/**
	 * Subscribes to a supplier chain's lists and waits for the response of the choice.
	 * @param lists the lists of the chain (of the stage's delegate when the stage is
	 * applied inline)
	 * @param request the request, or {@code null}
	 * @param routing the calling thread's routing context, or {@code null}
	 * @param chooser the chooser of the request's version
	 * @return the response: an instance or a {@link NoInstanceResponse}
	 * @throws IllegalStateException when it would have to wait on a non-blocking thread
	 * (an event loop), as {@code Mono.block()} refuses to (a response already there is
	 * returned, where {@code block()} would throw)
	 * @throws RuntimeException the error the chain signals or the choice throws (a
	 * checked one wrapped by {@link Exceptions#propagate}), or when the thread is
	 * interrupted while waiting (the chain is cancelled, the interrupt kept)
	 */
	static Response<ServiceInstance> await(Flux<List<ServiceInstance>> lists, @Nullable Request<?> request,
			@Nullable RoutingContext routing, Chooser chooser) {
		AwaitedChoice waiter = new AwaitedChoice(chooser, request, routing);
		lists.subscribe(waiter);
		return waiter.result();
	}

	private Response<ServiceInstance> result() {
		if (!this.publishedByCaller) {
			waitForResult();
		}
		Throwable failed = this.error;
		if (failed != null) {
			throw Exceptions.propagate(failed);
		}
		Response<ServiceInstance> result = this.response;
		if (result == null) {
			throw new IllegalStateException("the supplier chain ended without a signal");
		}
		return result;
	}

	private void waitForResult() {
		CountDownLatch published = latch();
		if (published.getCount() == 0) {
			return;
		}
		if (Schedulers.isInNonBlockingThread()) {
			// as Mono.block(): never wait on an event loop
			stopWaiting();
			throw new IllegalStateException("chooseAndWait() waits for the candidate list, which is not "
					+ "supported in thread " + Thread.currentThread().getName());
		}
		try {
			published.await();
		}
		catch (InterruptedException ex) {
			stopWaiting();
			Thread.currentThread().interrupt();
			throw Exceptions.propagate(ex);
		}
	}

	private void stopWaiting() {
		this.cancelled = true;
		Subscription subscription = (Subscription) UPSTREAM.getVolatile(this);
		if (subscription != null) {
			subscription.cancel();
		}
	}

	@Override
	public Context currentContext() {
		return this.context;
	}

	@Override
	public void onSubscribe(Subscription subscription) {
		if (!Operators.validate(this.upstream, subscription)) {
			return;
		}
		if (Thread.currentThread() == this.caller) {
			// during subscribe: the caller cannot have stopped waiting yet
			this.upstream = subscription;
		}
		else {
			// against a caller that stops waiting meanwhile: one of the two cancels
			UPSTREAM.setVolatile(this, subscription);
			if (this.cancelled) {
				subscription.cancel();
				return;
			}
		}
		subscription.request(Long.MAX_VALUE);
	}

	@Override
	public void onNext(List<ServiceInstance> list) {
		if (this.done) {
			Operators.onNextDropped(list, this.context);
			return;
		}
		this.done = true;
		Subscription subscription = this.upstream;
		if (subscription != null) {
			subscription.cancel();
		}
		if (this.cancelled) {
			return;
		}
		try {
			this.response = this.chooser.respond(list, this);
		}
		catch (Throwable ex) {
			// kept as it is if the hook rethrows it (a fatal error)
			this.error = ex;
			this.error = Operators.onOperatorError(ex, this.context);
		}
		finally {
			// also when a fatal error is thrown on: the caller must not wait forever
			publish();
		}
	}

	@Override
	public void onError(Throwable failure) {
		if (this.done) {
			Operators.onErrorDropped(failure, this.context);
			return;
		}
		this.done = true;
		this.error = failure;
		publish();
	}

	@Override
	public void onComplete() {
		if (this.done) {
			return;
		}
		this.done = true;
		this.response = this.chooser.noList();
		publish();
	}

	private void publish() {
		if (Thread.currentThread() == this.caller) {
			// during subscribe, on the thread that reads the result next: no latch
			this.publishedByCaller = true;
		}
		else {
			// the latch orders the writes above before the waiting thread's reads
			latch().countDown();
		}
	}

	private CountDownLatch latch() {
		CountDownLatch made = this.latch;
		if (made == null) {
			made = new CountDownLatch(1);
			if (!LATCH.compareAndSet(this, null, made)) {
				made = Objects.requireNonNull(this.latch, "the latch the other thread made");
			}
		}
		return made;
	}

	@Override
	public @Nullable Request<?> request() {
		return this.request;
	}

	@Override
	public @Nullable String header(String lowerCaseName) {
		return RequestHeaders.resolve(this.request, this.routing, lowerCaseName);
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
		return this.chooser;
	}

}
