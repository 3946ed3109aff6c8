package dev.atlas.sample.order;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

import org.jspecify.annotations.Nullable;

/**
 * Runs a bounded burst of calls on a few threads of its own, counting the calls that
 * fail. Used by the traffic and gray reports.
 */
final class Burst {

	/** The largest burst accepted. */
	static final int MAX_CALLS = 100_000;

	/** The most worker threads accepted. */
	static final int MAX_CONCURRENCY = 64;

	private Burst() {
	}

	/**
	 * Calls {@code call} with 0..calls-1, on {@code concurrency} threads.
	 * @param calls how many calls, 1..{@value #MAX_CALLS}
	 * @param concurrency how many threads, 1..{@value #MAX_CONCURRENCY}
	 * @param call one call; a {@link RuntimeException} counts as a failure
	 * @return the failures
	 * @throws IllegalArgumentException if calls or concurrency is out of range
	 * @throws InterruptedException if interrupted while waiting for the calls
	 */
	static Failures run(int calls, int concurrency, IntConsumer call) throws InterruptedException {
		if (calls < 1 || calls > MAX_CALLS) {
			throw new IllegalArgumentException("calls must be 1.." + MAX_CALLS + ", was " + calls);
		}
		if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
			throw new IllegalArgumentException("concurrency must be 1.." + MAX_CONCURRENCY + ", was " + concurrency);
		}
		LongAdder failures = new LongAdder();
		AtomicReference<String> firstError = new AtomicReference<>();
		AtomicInteger next = new AtomicInteger();
		Runnable worker = () -> {
			for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
				try {
					call.accept(i);
				}
				catch (RuntimeException ex) {
					failures.increment();
					firstError.compareAndSet(null, ex.toString());
				}
			}
		};
		ExecutorService pool = Executors.newFixedThreadPool(concurrency);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < concurrency; t++) {
				futures.add(pool.submit(worker));
			}
			for (Future<?> future : futures) {
				try {
					future.get();
				}
				catch (ExecutionException ex) {
					throw new IllegalStateException(ex.getCause());
				}
			}
		}
		finally {
			pool.shutdownNow();
		}
		return new Failures(failures.intValue(), firstError.get());
	}

	/**
	 * The failed calls of a burst.
	 *
	 * @param count how many failed
	 * @param first the first failure, or {@code null}
	 */
	record Failures(int count, @Nullable String first) {
	}

}
