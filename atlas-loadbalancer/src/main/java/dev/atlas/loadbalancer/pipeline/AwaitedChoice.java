package dev.atlas.loadbalancer.pipeline;

import java.util.concurrent.CountDownLatch;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * Waits for the response of one choice on the calling thread, as {@code Mono.block()}
 * does, but without what {@code block()} costs when Reactor's automatic context
 * propagation is on: a snapshot of every registered {@code ThreadLocal} per call, and an
 * operator that restores them around each signal. It subscribes with
 * {@code subscribe(CoreSubscriber)}, as Reactor's operators do (no last-operator hook, no
 * wrapping). The subscriber's {@code Context} holds the calling thread's routing context
 * (the one {@code ThreadLocal} a choice reads), under {@link RoutingContextHolder#KEY},
 * and nothing else. When the candidate list is at hand (the usual case: the supplier
 * chain's cache answers at once) the response arrives during {@code subscribe} and
 * nothing waits; else the thread waits for it. One object per call (the subscriber, which
 * is its own latch). Confined to one call: its fields are written by the publishing
 * thread and read by the waiting one after the latch opens.
 */
final class AwaitedChoice extends CountDownLatch implements CoreSubscriber<Response<ServiceInstance>> {

	private final Context context;

	private @Nullable Subscription subscription;

	private @Nullable Response<ServiceInstance> response;

	private @Nullable Throwable error;

	private AwaitedChoice(Context context) {
		super(1);
		this.context = context;
	}

	/**
	 * Subscribes to a choice and waits for its response.
	 * @param choice the {@code Mono} of one response
	 * @return the response, {@code null} when the {@code Mono} completes empty
	 * @throws IllegalStateException when it would wait on a non-blocking thread (an event
	 * loop), as {@code Mono.block()} does
	 * @throws RuntimeException the error the {@code Mono} signals (a checked one wrapped
	 * by {@link Exceptions#propagate}), or when the thread is interrupted while waiting
	 */
	static @Nullable Response<ServiceInstance> await(Mono<Response<ServiceInstance>> choice) {
		RoutingContext routing = RoutingContextHolder.get();
		AwaitedChoice waiter = new AwaitedChoice(
				(routing != null) ? Context.of(RoutingContextHolder.KEY, routing) : Context.empty());
		choice.subscribe(waiter);
		return waiter.response();
	}

	private @Nullable Response<ServiceInstance> response() {
		if (getCount() != 0) {
			if (Schedulers.isInNonBlockingThread()) {
				// as Mono.block(): never wait on an event loop
				throw new IllegalStateException("chooseAndWait() waits for the candidate list, which is not "
						+ "supported in thread " + Thread.currentThread().getName());
			}
			try {
				await();
			}
			catch (InterruptedException ex) {
				Subscription upstream = this.subscription;
				if (upstream != null) {
					upstream.cancel();
				}
				Thread.currentThread().interrupt();
				throw Exceptions.propagate(ex);
			}
		}
		Throwable failed = this.error;
		if (failed != null) {
			throw Exceptions.propagate(failed);
		}
		return this.response;
	}

	@Override
	public Context currentContext() {
		return this.context;
	}

	@Override
	public void onSubscribe(Subscription subscription) {
		this.subscription = subscription;
		subscription.request(Long.MAX_VALUE);
	}

	@Override
	public void onNext(Response<ServiceInstance> value) {
		if (this.response == null) {
			this.response = value;
		}
	}

	@Override
	public void onError(Throwable failure) {
		this.error = failure;
		countDown();
	}

	@Override
	public void onComplete() {
		countDown();
	}

}
