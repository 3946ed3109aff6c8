package dev.atlas.loadbalancer.routing;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.util.context.ContextView;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * The gray stage of the supplier chain: narrows the delegate's instances to the lane of each request
 * ({@link GrayRouter}). Sits above the cache, since its output depends on the request.
 *
 * <p>The wanted tag comes, in this order, from the outbound request's header, the routing context of the
 * inbound request being served (Reactor's {@code Context}, then the current thread's
 * {@link RoutingContextHolder}), then the caller's own tag. Reading the context directly means the
 * decision does not depend on whether a header-propagating interceptor ran before the load balancer.
 *
 * <p>Thread-safe.
 */
public class GrayServiceInstanceListSupplier extends DelegatingServiceInstanceListSupplier {

	private final GrayRouter router;

	private final SnapshotCache snapshots;

	/**
	 * Creates the stage.
	 * @param delegate the rest of the chain; not {@code null}
	 * @param router the rules of this service; not {@code null}
	 * @param snapshots parses the delegate's lists once per list object; not {@code null}
	 */
	public GrayServiceInstanceListSupplier(ServiceInstanceListSupplier delegate, GrayRouter router,
			SnapshotCache snapshots) {
		super(delegate);
		this.router = Objects.requireNonNull(router, "router");
		this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
	}

	@Override
	public Flux<List<ServiceInstance>> get() {
		return get(null);
	}

	@Override
	public Flux<List<ServiceInstance>> get(@Nullable Request request) {
		return Flux.deferContextual((reactorContext) -> {
			RoutingContext context = current(reactorContext);
			GrayRules rules = this.router.rules();
			String wanted = RequestHeaders.resolve(request, context, rules.header());
			if (wanted == null) {
				wanted = rules.ownTag();
			}
			String hashKey = (rules.hashKeyHeader() != null)
					? RequestHeaders.resolve(request, context, rules.hashKeyHeader()) : null;
			String tag = wanted;
			Flux<List<ServiceInstance>> upstream = (request != null) ? this.delegate.get(request) : this.delegate.get();
			return upstream.map((list) -> this.router.route(this.snapshots.snapshotOf(list), tag, hashKey,
					ThreadLocalRandom.current()));
		});
	}

	private static @Nullable RoutingContext current(ContextView reactorContext) {
		Object fromReactor = reactorContext.getOrDefault(RoutingContextHolder.KEY, null);
		return (fromReactor instanceof RoutingContext context) ? context : RoutingContextHolder.get();
	}

}
