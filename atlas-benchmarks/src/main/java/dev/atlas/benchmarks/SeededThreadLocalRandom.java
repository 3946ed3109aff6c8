package dev.atlas.benchmarks;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * Runs code on a fresh thread whose {@link java.util.concurrent.ThreadLocalRandom} starts
 * from a chosen seed, so that code drawing from {@code ThreadLocalRandom} (Nacos's
 * weighted chooser, Spring's {@code RandomLoadBalancer}) gives the same picks on every
 * run. {@code ThreadLocalRandom} has no seeding API; its state lives in fields of
 * {@link Thread}, set here through {@code sun.misc.Unsafe} (module
 * {@code jdk.unsupported}, no {@code --add-opens} needed): the seed, the probe, and,
 * while the task runs, the thread's id, from which the generator's increment is derived.
 * If a JDK ever refuses, the code runs unseeded and {@link Outcome#seeded()} says so. For
 * this simulation only: never do this in production code.
 */
public final class SeededThreadLocalRandom {

	/**
	 * The thread id the seeded thread wears while the task runs (far above any real one).
	 */
	private static final long PINNED_THREAD_ID = 1L << 40;

	private SeededThreadLocalRandom() {
	}

	/**
	 * Runs a task on a new thread seeded with {@code seed}, and waits for it.
	 * @param seed the seed
	 * @param task the task
	 * @param <T> the result type
	 * @return its result
	 * @throws Exception what the task threw
	 */
	public static <T> Outcome<T> call(long seed, Callable<T> task) throws Exception {
		AtomicReference<Outcome<T>> result = new AtomicReference<>();
		AtomicReference<Exception> failure = new AtomicReference<>();
		Thread thread = new Thread(() -> {
			Runnable restore = seedCurrentThread(seed);
			try {
				result.set(new Outcome<>(task.call(), restore != null));
			}
			catch (Exception ex) {
				failure.set(ex);
			}
			finally {
				if (restore != null) {
					restore.run();
				}
			}
		}, "seeded-" + seed);
		thread.start();
		thread.join();
		if (failure.get() != null) {
			throw failure.get();
		}
		return Objects.requireNonNull(result.get(), "set when the task returned");
	}

	/**
	 * Seeds the current thread's {@code ThreadLocalRandom}. Since JDK 17 its increment is
	 * derived from the thread's id ({@code nextSeed()} adds
	 * {@code (id << 1) + GOLDEN_GAMMA}), so the id is pinned too, for the duration of the
	 * task only.
	 * @return what puts the thread's id back, or {@code null} if the thread could not be
	 * seeded
	 */
	private static @Nullable Runnable seedCurrentThread(long seed) {
		try {
			Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
			Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
			theUnsafe.setAccessible(true);
			Object unsafe = theUnsafe.get(null);
			Method offset = unsafeClass.getMethod("objectFieldOffset", Field.class);
			Method getLong = unsafeClass.getMethod("getLong", Object.class, long.class);
			Method putLong = unsafeClass.getMethod("putLong", Object.class, long.class, long.class);
			Method putInt = unsafeClass.getMethod("putInt", Object.class, long.class, int.class);
			long seedOffset = (long) offset.invoke(unsafe, Thread.class.getDeclaredField("threadLocalRandomSeed"));
			long probeOffset = (long) offset.invoke(unsafe, Thread.class.getDeclaredField("threadLocalRandomProbe"));
			long idOffset = (long) offset.invoke(unsafe, Thread.class.getDeclaredField("tid"));
			Thread current = Thread.currentThread();
			long originalId = (long) getLong.invoke(unsafe, current, idOffset);
			putLong.invoke(unsafe, current, idOffset, PINNED_THREAD_ID);
			putLong.invoke(unsafe, current, seedOffset, seed);
			// A non-zero probe tells ThreadLocalRandom.current() that the thread is
			// initialized, so it keeps the seed.
			putInt.invoke(unsafe, current, probeOffset, 0x9E3779B9);
			return () -> {
				try {
					putLong.invoke(unsafe, current, idOffset, originalId);
				}
				catch (ReflectiveOperationException ex) {
					throw new IllegalStateException(ex);
				}
			};
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			return null;
		}
	}

	/**
	 * What the task returned, and whether the thread was seeded.
	 *
	 * @param value the task's result
	 * @param seeded {@code false} if the seed could not be set
	 * @param <T> the result type
	 */
	public record Outcome<T>(T value, boolean seeded) {
	}

}
