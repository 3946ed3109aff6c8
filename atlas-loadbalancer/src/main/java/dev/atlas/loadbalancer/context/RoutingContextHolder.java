package dev.atlas.loadbalancer.context;

import org.jspecify.annotations.Nullable;

/**
 * The {@link RoutingContext} of the current thread. Inbound adapters (a servlet filter)
 * set it for the duration of a request and clear it afterwards;
 * {@link RoutingContextAccessor} lets Micrometer's context-propagation carry it to other
 * threads ({@code @Async}, executors) and to and from Reactor's {@code Context} under the
 * key {@link #KEY}.
 *
 * <p>
 * Thread confinement makes it thread-safe. Until a context is first set on any thread,
 * {@link #get()} answers {@code null} without reading the thread-local (a load balancer
 * reads it on every pick, and most applications never route by a propagated context).
 *
 * @since 0.1.0
 */
public final class RoutingContextHolder {

	/**
	 * Key of the routing context in Reactor's {@code Context} and in context-propagation
	 * snapshots.
	 */
	public static final String KEY = "dev.atlas.routing-context";

	private static final ThreadLocal<RoutingContext> CURRENT = new ThreadLocal<>();

	/**
	 * Whether a context was ever set on any thread. Set before the thread-local, so that
	 * the thread that sets a context sees it in program order; another thread does not
	 * see that thread's thread-local anyway.
	 */
	private static volatile boolean everSet;

	private RoutingContextHolder() {
	}

	/**
	 * The current thread's context.
	 * @return the context, or {@code null} when the thread serves no routed request
	 */
	public static @Nullable RoutingContext get() {
		return everSet ? CURRENT.get() : null;
	}

	/**
	 * Sets the current thread's context.
	 * @param context the context; {@code null} or {@link RoutingContext#EMPTY} clears it
	 */
	public static void set(@Nullable RoutingContext context) {
		if (context == null || context.isEmpty()) {
			CURRENT.remove();
		}
		else {
			if (!everSet) {
				everSet = true;
			}
			CURRENT.set(context);
		}
	}

	/** Clears the current thread's context. */
	public static void clear() {
		CURRENT.remove();
	}

}
