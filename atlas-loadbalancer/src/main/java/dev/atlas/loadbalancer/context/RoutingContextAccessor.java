package dev.atlas.loadbalancer.context;

import io.micrometer.context.ThreadLocalAccessor;
import org.jspecify.annotations.Nullable;

/**
 * Lets Micrometer's context-propagation capture and restore the
 * {@link RoutingContextHolder}: register it once with
 * {@code ContextRegistry.getInstance().registerThreadLocalAccessor(new RoutingContextAccessor())}
 * (Atlas's auto-configuration does) and Spring's {@code ContextPropagatingTaskDecorator}
 * and Reactor's context propagation carry the routing context across threads.
 *
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class RoutingContextAccessor implements ThreadLocalAccessor<RoutingContext> {

	@Override
	public Object key() {
		return RoutingContextHolder.KEY;
	}

	@Override
	public @Nullable RoutingContext getValue() {
		return RoutingContextHolder.get();
	}

	@Override
	public void setValue(RoutingContext value) {
		RoutingContextHolder.set(value);
	}

	@Override
	public void setValue() {
		RoutingContextHolder.clear();
	}

}
