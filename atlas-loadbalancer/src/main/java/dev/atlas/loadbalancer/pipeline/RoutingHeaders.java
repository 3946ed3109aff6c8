package dev.atlas.loadbalancer.pipeline;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * Where a routing header's value comes from, in this order: the outbound request's
 * header, then the routing context of the inbound request being served (Reactor's
 * {@code Context} of the subscriber, then the {@link RoutingContextHolder} of the thread
 * that asked for the choice, or that of the thread the list arrives on when the asking
 * thread's was not read). Reading the context directly means the decision does not depend
 * on whether a header-propagating interceptor ran before the load balancer.
 */
final class RoutingHeaders {

	private RoutingHeaders() {
	}

	/**
	 * The routing context that applies.
	 * @param reactorContext the subscriber's Reactor {@code Context}
	 * @param onCallingThread the routing context of the thread that asked for the choice
	 * ({@link RoutingContext#EMPTY} when it was read and the thread had none), or
	 * {@code null} when it was not read: then the current thread's is read
	 * @return the context, or {@code null} when none applies
	 */
	static @Nullable RoutingContext context(ContextView reactorContext, @Nullable RoutingContext onCallingThread) {
		Object fromReactor = reactorContext.getOrDefault(RoutingContextHolder.KEY, null);
		if (fromReactor instanceof RoutingContext context) {
			return context;
		}
		return (onCallingThread != null) ? onCallingThread : RoutingContextHolder.get();
	}

}
