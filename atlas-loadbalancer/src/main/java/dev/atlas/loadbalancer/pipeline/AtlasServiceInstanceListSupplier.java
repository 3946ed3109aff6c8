package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Objects;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.util.context.ContextView;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * Atlas's stage of the supplier chain, on top of the delegate (discovery + cache). For
 * each list the delegate emits and each request:
 * <ol>
 * <li>an empty answer is replaced by the {@link LastKnownGood last known good} list, if
 * configured;</li>
 * <li>the list becomes an {@link InstanceSnapshot}, parsed once per list object;</li>
 * <li>every {@link WeightAdjuster}, in order (warmup, ...), adjusts effective
 * weights;</li>
 * <li>every {@link CandidateFilter}, in order (gray lane, cluster affinity, retry
 * avoidance, the application's own), narrows the candidates for the request.</li>
 * </ol>
 * Each adjuster and filter memoizes its work per snapshot, so once a list is known a
 * request costs a few lookups and allocates nothing. Since the result depends on the
 * request, the stage must sit above the cache. The adjusters and filters are those of the
 * current version of the service's {@link ServicePipeline}, read once per request; when
 * the rules change, the next request uses the next version.
 *
 * <p>
 * Filters read routing headers through {@link CandidateRequest#header}: the outbound
 * request's header, then the routing context of the inbound request being served (see
 * {@link RoutingHeaders}).
 *
 * <p>
 * {@link AtlasLoadBalancer}'s {@link Chooser} applies this stage inside the subscriber
 * that makes the request's choice when the stage tops the chain ({@link #delegateLists},
 * {@link #select}), one operator less per request, and takes the reason for an empty
 * result from {@link #select}; subscribing to {@link #get(Request)} gives the same lists.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class AtlasServiceInstanceListSupplier extends DelegatingServiceInstanceListSupplier {

	private final @Nullable LastKnownGood lastKnownGood;

	private final ServicePipeline pipeline;

	private volatile InstanceSnapshot lastSeen = InstanceSnapshot.EMPTY;

	/**
	 * Creates the stage.
	 * @param delegate the rest of the chain
	 * @param lastKnownGood keeps the last non-empty list over empty answers, or
	 * {@code null} for none
	 * @param pipeline the service's routing: its current version's snapshot cache,
	 * adjusters and filters apply; share it with the service's {@link AtlasLoadBalancer}
	 * so that a request sees one version of the rules
	 */
	public AtlasServiceInstanceListSupplier(ServiceInstanceListSupplier delegate, @Nullable LastKnownGood lastKnownGood,
			ServicePipeline pipeline) {
		super(delegate);
		this.lastKnownGood = lastKnownGood;
		this.pipeline = Objects.requireNonNull(pipeline, "pipeline");
	}

	@Override
	public Flux<List<ServiceInstance>> get() {
		return get(null);
	}

	@Override
	public Flux<List<ServiceInstance>> get(@Nullable Request request) {
		// The thread's routing context is read now, on the calling thread (the blocking
		// path), since the list may arrive on another thread (a cache miss fetches on a
		// scheduler); handle() hands over the subscriber's Reactor Context (the reactive
		// path) when the list arrives.
		RoutingContext onCallingThread = RoutingContextHolder.get();
		return delegateLists(request).handle((list, sink) -> {
			StageRequest staged = new StageRequest(request, sink.contextView(), onCallingThread);
			select(list, staged, version(sink.contextView()));
			sink.next(staged.candidates());
		});
	}

	/**
	 * The version of the routing for a request: the one its load balancer read, when it
	 * shares this stage's {@link ServicePipeline} and put it in the subscriber's
	 * {@code Context} (see {@link Chooser}), else the one in force now.
	 */
	private Pipeline version(ContextView context) {
		Pipeline read = context.getOrDefault(this.pipeline, null);
		return (read != null) ? read : this.pipeline.current();
	}

	/**
	 * The lists of this stage's delegate for a request, before this stage: {@code get}
	 * emits exactly {@link #select} of each of them.
	 * @param request the request, may be {@code null}
	 * @return the delegate's {@code get(request)} ({@code get()} when {@code request} is
	 * {@code null})
	 */
	Flux<List<ServiceInstance>> delegateLists(@Nullable Request<?> request) {
		return (request != null) ? this.delegate.get(request) : this.delegate.get();
	}

	/**
	 * What this stage makes of one list of its delegate for one request, with one version
	 * of the service's routing: last-known-good, the version's snapshot and adjusters,
	 * then its filters. Allocates nothing once the list's snapshot and every step's work
	 * on it are memoized.
	 * @param list a list emitted by the delegate
	 * @param request read by the filters; told the candidates they leave (an
	 * {@link InstanceSnapshot}, possibly empty)
	 * @param version the version read once for the request
	 * @return {@code null} when candidates are left, else why none are
	 */
	@Nullable NoInstanceReason select(List<ServiceInstance> list, StagedRequest request, Pipeline version) {
		LastKnownGood lkg = this.lastKnownGood;
		InstanceSnapshot candidates = version.adjusted((lkg != null) ? lkg.apply(list) : list);
		if (this.lastSeen != candidates) {
			this.lastSeen = candidates;
		}
		return version.narrow(candidates, request);
	}

	/**
	 * The last full instance list this stage saw, after last-known-good and the weight
	 * adjusters, before any request-dependent narrowing; for the actuator view.
	 * @return empty before the first request
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
	 * The weight adjusters of the version in force, in the order applied.
	 * @return an unmodifiable list
	 */
	public List<WeightAdjuster> adjusters() {
		return this.pipeline.current().adjusters();
	}

	/**
	 * The candidate filters of the version in force, in the order applied.
	 * @return an unmodifiable list
	 */
	public List<CandidateFilter> filters() {
		return this.pipeline.current().filters();
	}

	/**
	 * The service's routing this stage applies.
	 * @return the holder of the version in force
	 */
	public ServicePipeline pipeline() {
		return this.pipeline;
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

}
