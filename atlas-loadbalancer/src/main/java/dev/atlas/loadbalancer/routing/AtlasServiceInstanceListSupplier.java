package dev.atlas.loadbalancer.routing;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.weighting.SlowStart;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * Atlas's stage of the supplier chain, on top of the delegate (discovery + cache):
 * replaces an empty answer by the {@link LastKnownGood last known good} list, turns the
 * list into an {@link InstanceSnapshot} (parsed once per refresh), then applies, each
 * memoized per snapshot:
 * <ol>
 * <li>{@link SlowStart warmup} to the whole list (effective weights of young
 * instances);</li>
 * <li>{@link GrayRouter gray routing}: the lane of the request;</li>
 * <li>{@link ClusterAffinity cluster affinity} within that lane.</li>
 * </ol>
 * Each concern is optional ({@code null} turns it off). On a retry, the instance that
 * just failed is left out ({@link #avoid}), whatever the strategy. Since the result
 * depends on the request, the stage must sit above the cache.
 *
 * <p>
 * The wanted tag comes, in this order, from the outbound request's header, the routing
 * context of the inbound request being served (Reactor's {@code Context} of the
 * subscriber, then the {@link RoutingContextHolder} of the thread that asked for the
 * candidates, then that of the thread the list arrives on), then the caller's own tag.
 * Reading the context directly means the decision does not depend on whether a
 * header-propagating interceptor ran before the load balancer.
 *
 * <p>
 * Thread-safe.
 */
public class AtlasServiceInstanceListSupplier extends DelegatingServiceInstanceListSupplier {

	private final SnapshotCache snapshots;

	private final @Nullable LastKnownGood lastKnownGood;

	private final @Nullable SlowStart slowStart;

	private final @Nullable GrayRouter gray;

	private final @Nullable ClusterAffinity affinity;

	// Header names as looked up, lower-cased once: Spring's HttpHeaders and
	// RoutingContext lower-case the name
	// of every lookup, which allocates a new String per request unless it already is
	// lower case.
	private final @Nullable String tagHeaderKey;

	private final @Nullable String hashKeyHeaderKey;

	private volatile InstanceSnapshot lastSeen = InstanceSnapshot.EMPTY;

	/**
	 * Creates the stage.
	 * @param delegate the rest of the chain; not {@code null}
	 * @param snapshots parses the delegate's lists once per list object; not {@code null}
	 * @param lastKnownGood keeps the last non-empty list over empty answers, or
	 * {@code null} for none
	 * @param slowStart warmup, or {@code null} for none
	 * @param gray gray routing, or {@code null} for none
	 * @param affinity cluster affinity, or {@code null} for none
	 */
	public AtlasServiceInstanceListSupplier(ServiceInstanceListSupplier delegate, SnapshotCache snapshots,
			@Nullable LastKnownGood lastKnownGood, @Nullable SlowStart slowStart, @Nullable GrayRouter gray,
			@Nullable ClusterAffinity affinity) {
		super(delegate);
		this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
		this.lastKnownGood = lastKnownGood;
		this.slowStart = slowStart;
		this.gray = gray;
		this.affinity = affinity;
		this.tagHeaderKey = (gray != null) ? lowerCase(gray.rules().header()) : null;
		this.hashKeyHeaderKey = (gray != null) ? lowerCase(gray.rules().hashKeyHeader()) : null;
	}

	private static @Nullable String lowerCase(@Nullable String headerName) {
		return (headerName != null) ? headerName.toLowerCase(Locale.ROOT) : null;
	}

	@Override
	public Flux<List<ServiceInstance>> get() {
		return get(null);
	}

	@Override
	public Flux<List<ServiceInstance>> get(@Nullable Request request) {
		Flux<List<ServiceInstance>> upstream = delegateLists(request);
		if (this.gray == null) {
			return upstream.map((list) -> select(list, request, Context.empty(), null));
		}
		// One operator per request: handle() hands over the subscriber's Reactor Context
		// (the reactive path)
		// when the list arrives; the thread's context is read now, on the calling thread
		// (the blocking path),
		// since the list may arrive on another thread (a cache miss fetches on a
		// scheduler).
		RoutingContext onCallingThread = RoutingContextHolder.get();
		return upstream.handle((list, sink) -> sink.next(select(list, request, sink.contextView(), onCallingThread)));
	}

	/**
	 * The lists of this stage's delegate for a request, before this stage. With
	 * {@link #select} this lets {@code AtlasLoadBalancer} apply the stage inside its own
	 * operator instead of subscribing through one more: {@code get(request)} emits
	 * exactly {@code select(list, request, context, thread's context)} for every
	 * {@code list} of {@code delegateLists(request)}.
	 * @param request the request, may be {@code null}
	 * @return the delegate's {@code get(request)} ({@code get()} when {@code request} is
	 * {@code null})
	 */
	public Flux<List<ServiceInstance>> delegateLists(@Nullable Request<?> request) {
		return (request != null) ? this.delegate.get(request) : this.delegate.get();
	}

	/**
	 * What this stage makes of one list of its delegate for one request: last-known-good,
	 * snapshot, warmup, the request's gray lane, cluster affinity, and on a retry the
	 * failed instance left out. Allocates nothing once the list's snapshot and lanes are
	 * memoized.
	 * @param list a list emitted by the delegate; not {@code null}
	 * @param request the request, may be {@code null}; its outbound headers name the
	 * wanted tag, and on a retry its {@link RetryableRequestContext} names the instance
	 * to avoid
	 * @param reactorContext the subscriber's Reactor {@code Context}; a
	 * {@link RoutingContext} under {@link RoutingContextHolder#KEY} in it wins over the
	 * thread's; not {@code null}
	 * @param onCallingThread the routing context of the thread that made the request, or
	 * {@code null}; when both are absent, the current thread's is used
	 * @return the candidates, an {@link InstanceSnapshot}, possibly empty; never
	 * {@code null}
	 */
	public List<ServiceInstance> select(List<ServiceInstance> list, @Nullable Request<?> request,
			ContextView reactorContext, @Nullable RoutingContext onCallingThread) {
		ServiceInstance previous = (request != null && request.getContext() instanceof RetryableRequestContext retry)
				? retry.getPreviousServiceInstance() : null;
		GrayRouter router = this.gray;
		if (router == null) {
			return avoid(route(list, null, null), previous);
		}
		RoutingContext context = current(reactorContext, onCallingThread);
		String wanted = RequestHeaders.resolve(request, context, this.tagHeaderKey);
		String tag = (wanted != null) ? wanted : router.rules().ownTag();
		String hashKey = (this.hashKeyHeaderKey != null)
				? RequestHeaders.resolve(request, context, this.hashKeyHeaderKey) : null;
		return avoid(route(list, tag, hashKey), previous);
	}

	/**
	 * On a retry, the candidates without the instance that just failed, matched by
	 * instance id or by host and port (not by object identity: the registry client may
	 * have produced new objects since, and not every {@code ServiceInstance} implements
	 * {@code equals}). When nothing would be left, the candidates stay as they are, so
	 * the caller sees that instance's own error rather than "no instance available".
	 */
	static List<ServiceInstance> avoid(List<ServiceInstance> candidates, @Nullable ServiceInstance previous) {
		if (previous == null || !(candidates instanceof InstanceSnapshot snapshot)) {
			return candidates;
		}
		InstanceSnapshot others = snapshot.filter((i) -> !sameInstance(snapshot.get(i), previous));
		return others.isEmpty() ? candidates : others;
	}

	static boolean sameInstance(ServiceInstance a, ServiceInstance b) {
		if (a == b) {
			return true;
		}
		String idA = a.getInstanceId();
		String idB = b.getInstanceId();
		if (idA != null && idB != null) {
			return idA.equals(idB);
		}
		return a.getPort() == b.getPort() && java.util.Objects.equals(a.getHost(), b.getHost());
	}

	private List<ServiceInstance> route(List<ServiceInstance> list, @Nullable String tag, @Nullable String hashKey) {
		InstanceSnapshot candidates = this.snapshots
			.snapshotOf((this.lastKnownGood != null) ? this.lastKnownGood.apply(list) : list);
		if (this.slowStart != null) {
			candidates = this.slowStart.apply(candidates);
		}
		if (this.lastSeen != candidates) {
			this.lastSeen = candidates;
		}
		if (this.gray != null) {
			candidates = this.gray.route(candidates, tag, hashKey, ThreadLocalRandom.current());
		}
		if (this.affinity != null) {
			candidates = this.affinity.apply(candidates);
		}
		return candidates;
	}

	/**
	 * The last full instance list this stage saw, after last-known-good and warmup,
	 * before any request-dependent narrowing; for the actuator view.
	 * @return never {@code null}; empty before the first request
	 */
	public InstanceSnapshot lastSeen() {
		return this.lastSeen;
	}

	/**
	 * Whether the last registry answer was replaced by the last known good list.
	 * @return {@code false} without last-known-good
	 */
	public boolean isStale() {
		return this.lastKnownGood != null && this.lastKnownGood.isStale();
	}

	/**
	 * The warmup in use.
	 * @return {@code null} when warmup is off
	 */
	public @Nullable SlowStart slowStart() {
		return this.slowStart;
	}

	/**
	 * Finds Atlas's stage in a supplier chain: the supplier itself or one of its
	 * delegates (Spring's retry-aware supplier, for one, wraps it).
	 * @param supplier the top of a chain, may be {@code null}
	 * @return the stage, or {@code null} when the chain has none
	 */
	public static @Nullable AtlasServiceInstanceListSupplier find(@Nullable ServiceInstanceListSupplier supplier) {
		ServiceInstanceListSupplier current = supplier;
		for (int depth = 0; current != null && depth < 32; depth++) {
			if (current instanceof AtlasServiceInstanceListSupplier atlas) {
				return atlas;
			}
			current = (current instanceof DelegatingServiceInstanceListSupplier delegating) ? delegating.getDelegate()
					: null;
		}
		return null;
	}

	private static @Nullable RoutingContext current(ContextView reactorContext,
			@Nullable RoutingContext onCallingThread) {
		Object fromReactor = reactorContext.getOrDefault(RoutingContextHolder.KEY, null);
		if (fromReactor instanceof RoutingContext context) {
			return context;
		}
		return (onCallingThread != null) ? onCallingThread : RoutingContextHolder.get();
	}

}
