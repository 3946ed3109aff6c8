package dev.atlas.loadbalancer.overload;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The overload marker across hops (as Envoy's {@code x-envoy-overloaded}): when Atlas
 * gives up on a call because of overload (a retry the {@link RetryBudget} refused, every
 * instance at the per-instance in-flight limit, or a last retry answered with a retryable
 * status again) while the application handles an inbound request, the answer to that
 * request carries {@value #HEADER}{@code : true}, so that an Atlas caller one hop up does
 * not retry it: the overload is bounded once, where it was seen, not again at every layer
 * above.
 *
 * <p>
 * The inbound side binds a mark to each inbound request: a servlet filter of the
 * auto-configuration to the thread that handles it, a WebFlux filter to the Reactor
 * context of its handling under {@link #CONTEXT_KEY}. Atlas's retry paths
 * {@linkplain #mark() mark} it when they give up for overload. A client whose retry
 * decision runs on another thread (WebClient) captures the mark with {@link #current()}
 * on the calling thread, or from the Reactor context it is subscribed with. The reading
 * side, in every retry path, does not retry an answer that carries the header
 * ({@link #isMarked}); the header is read only from load-balanced targets and never
 * forwarded. Thread-safe.
 *
 * @since 0.1.0
 */
public final class OverloadMarks {

	/** The response header of the marker; its value is {@code true}. */
	public static final String HEADER = "X-Atlas-Overloaded";

	/**
	 * The key of the mark (a {@link Runnable}) in the Reactor context of a WebFlux
	 * application's handling of an inbound request.
	 */
	public static final String CONTEXT_KEY = "atlas.overload-mark";

	private static final ThreadLocal<@Nullable Runnable> CURRENT = new ThreadLocal<>();

	private OverloadMarks() {
	}

	/**
	 * Binds the mark of the inbound request this thread handles.
	 * @param mark sets the header on the request's answer if it is not committed yet;
	 * must not throw; idempotent
	 */
	public static void bind(Runnable mark) {
		CURRENT.set(mark);
	}

	/** Unbinds this thread's mark (the inbound request ended). */
	public static void unbind() {
		CURRENT.remove();
	}

	/**
	 * The mark of the inbound request this thread handles.
	 * @return {@code null} outside an inbound request
	 */
	public static @Nullable Runnable current() {
		return CURRENT.get();
	}

	/**
	 * Marks the answer of the inbound request this thread handles, if any: Atlas gave up
	 * on a call for overload.
	 */
	public static void mark() {
		mark(CURRENT.get());
	}

	/**
	 * Runs a captured mark, if any.
	 * @param mark from {@link #current()}; may be {@code null}
	 */
	public static void mark(@Nullable Runnable mark) {
		if (mark != null) {
			try {
				mark.run();
			}
			catch (RuntimeException ex) {
				// a marker never changes the call's own outcome
			}
		}
	}

	/**
	 * Whether a value of the {@value #HEADER} header marks an answer as overload that an
	 * Atlas application gave up on.
	 * @param value the header's first value; may be {@code null}
	 * @return {@code true} for {@code true}, case-insensitively
	 */
	public static boolean isMarked(@Nullable String value) {
		return value != null && "true".equals(value.trim().toLowerCase(Locale.ROOT));
	}

}
