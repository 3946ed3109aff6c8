package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.atlas.loadbalancer.choice.Balancer;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.PickContext;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RetryAwareServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * Atlas's {@link ReactorServiceInstanceLoadBalancer}: pulls the candidates for a request
 * from the {@link ServiceInstanceListSupplier} chain and lets a
 * {@link LoadBalancingStrategy} choose among them, giving it the request and live
 * per-instance statistics ({@link PickContext}).
 *
 * <p>
 * Never signals an error for a missing choice: an empty candidate list, an empty supplier
 * or a rejection by the strategy all give Spring's {@link EmptyResponse}, as a
 * {@link NoInstanceResponse} naming the service and the {@link NoInstanceReason reason}
 * (so every Spring Cloud client runs its own empty-response path: its {@code DISCARD}
 * lifecycle callback, its error or 503; Atlas's client adapters then raise a
 * {@link NoInstanceAvailableException}). The chosen instance is the very object the
 * supplier produced. Thread-safe.
 *
 * @since 0.1.0
 */
public class AtlasLoadBalancer implements ReactorServiceInstanceLoadBalancer {

	final LiveStats stats;

	private final String serviceId;

	private final Map<NoInstanceReason, NoInstanceResponse> noInstance;

	private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;

	private final ServicePipeline pipeline;

	private volatile Bound bound;

	private volatile Chain chain = new Chain(null, null, false);

	/**
	 * Creates the load balancer of one service with a weighted balancer and no live
	 * statistics (engine use and tests).
	 * @param serviceId the service
	 * @param supplierProvider the supplier chain, typically
	 * {@code LoadBalancerClientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class)};
	 * when it yields nothing, every request gets an empty response
	 * @param balancer the algorithm; it also parses lists that are not snapshots yet
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			Balancer balancer) {
		this(serviceId, supplierProvider,
				new ServicePipeline(
						new Pipeline(balancer::snapshotOf, List.of(), List.of(), balancer.name(), balancer)),
				LiveStats.NONE);
	}

	/**
	 * Creates the load balancer of one service with a fixed strategy.
	 * @param serviceId the service
	 * @param supplierProvider the supplier chain; when it yields nothing, every request
	 * gets an empty response
	 * @param strategyName the name the strategy is registered and selected under
	 * @param strategy the algorithm
	 * @param snapshots parses lists that are not snapshots yet (when no Atlas stage is in
	 * the chain)
	 * @param stats this service's live per-instance statistics, given to the strategy
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			String strategyName, LoadBalancingStrategy strategy, SnapshotCache snapshots, LiveStats stats) {
		this(serviceId, supplierProvider,
				new ServicePipeline(new Pipeline(snapshots, List.of(), List.of(), strategyName, strategy)), stats);
	}

	/**
	 * Creates the load balancer of one service.
	 * @param serviceId the service
	 * @param supplierProvider the supplier chain; when it yields nothing, every request
	 * gets an empty response
	 * @param pipeline the service's routing: its current version's strategy chooses; when
	 * Atlas's stage in the chain shares it, a request reads one version for the stage and
	 * the choice (the rules change atomically)
	 * @param stats this service's live per-instance statistics, given to the strategy
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			ServicePipeline pipeline, LiveStats stats) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.noInstance = NoInstanceResponse.allFor(serviceId);
		this.supplierProvider = Objects.requireNonNull(supplierProvider, "supplierProvider");
		this.pipeline = Objects.requireNonNull(pipeline, "pipeline");
		this.stats = Objects.requireNonNull(stats, "stats");
		this.bound = new Bound(this, pipeline.current());
	}

	/**
	 * Chooses an instance for a request from the first candidate list the supplier chain
	 * emits.
	 * @param request the request, handed to the supplier chain (filters read its
	 * headers); may be {@code null}
	 * @return a {@code Mono} of exactly one response: the chosen instance, or a
	 * {@link NoInstanceResponse} (an {@code EmptyResponse}) when there is none to choose;
	 * it signals an error if the supplier chain does or if routing or choosing throws (a
	 * bug: bad input never does)
	 */
	@Override
	@SuppressWarnings({ "rawtypes", "unchecked" })
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceInstanceListSupplier supplier = this.supplierProvider
			.getIfAvailable(NoopServiceInstanceListSupplier::new);
		// One read of the rules in force for the whole request.
		Bound chooser = bound();
		Chain chain = chain(supplier);
		AtlasServiceInstanceListSupplier stage = chain.inline;
		if (stage != null) {
			return FirstListChoice.throughStage(stage, request, RoutingContextHolder.get(), chooser);
		}
		if (chain.stageBelow) {
			return FirstListChoice.overStage(supplier.get(request), request, chooser, supplier);
		}
		return FirstListChoice.over(supplier.get(request), request, chooser, supplier);
	}

	/**
	 * What the supplier chain is, worked out once per supplier object (the provider
	 * returns the same one for every request).
	 */
	private Chain chain(ServiceInstanceListSupplier supplier) {
		Chain chain = this.chain;
		if (chain.supplier != supplier) {
			AtlasServiceInstanceListSupplier inline = inlineStage(supplier);
			chain = new Chain(supplier, inline,
					inline == null && AtlasServiceInstanceListSupplier.find(supplier) != null);
			this.chain = chain;
		}
		return chain;
	}

	/**
	 * This load balancer with the version of its routing in force, made once per version
	 * (not per request): what a request's operator holds, so that holding the version
	 * costs the request nothing.
	 */
	private Bound bound() {
		Pipeline version = this.pipeline.current();
		Bound bound = this.bound;
		if (bound.version != version) {
			bound = new Bound(this, version);
			this.bound = bound;
		}
		return bound;
	}

	/**
	 * Atlas's stage when it is the top of the chain, or right below Spring's retry-aware
	 * supplier (whose only job, leaving out the previously failed instance, Atlas's retry
	 * avoidance does too, by id rather than by {@code equals}): then the stage is applied
	 * inside the choosing operator, one Reactor operator less per request. Spring's
	 * supplier is matched by exact class (a subclass may do more); any other supplier on
	 * top is subscribed to as it is.
	 */
	private static @Nullable AtlasServiceInstanceListSupplier inlineStage(ServiceInstanceListSupplier supplier) {
		ServiceInstanceListSupplier candidate = supplier;
		if (candidate.getClass() == RetryAwareServiceInstanceListSupplier.class) {
			candidate = ((RetryAwareServiceInstanceListSupplier) candidate).getDelegate();
		}
		return (candidate instanceof AtlasServiceInstanceListSupplier stage) ? stage : null;
	}

	/**
	 * The response for one candidate list.
	 * @param supplier told the choice if it is a {@link SelectedInstanceCallback}
	 * @param candidates the candidates, or {@code null} for none
	 * @param context the request and live statistics; its candidates are set here, and it
	 * knows why the candidates are empty when Atlas's stage ran inline
	 * @param version the version of the routing read for the request: its strategy
	 * chooses
	 * @return the chosen instance, or a {@link NoInstanceResponse}
	 */
	Response<ServiceInstance> respond(ServiceInstanceListSupplier supplier, @Nullable List<ServiceInstance> candidates,
			Picking context, Pipeline version) {
		if (candidates == null) {
			return noInstance(NoInstanceReason.NO_INSTANCES);
		}
		InstanceSnapshot snapshot = version.snapshots.apply(candidates);
		context.candidates(snapshot);
		int index = version.strategy.choose(snapshot, context);
		if (index < 0) {
			return noInstance(whyNone(snapshot, supplier, context));
		}
		ServiceInstance chosen = snapshot.get(index);
		if (supplier instanceof SelectedInstanceCallback callback) {
			callback.selectedServiceInstance(chosen);
		}
		return new DefaultResponse(chosen);
	}

	/**
	 * Why a strategy chose none (only on that path: never on a request that gets an
	 * instance).
	 */
	private static NoInstanceReason whyNone(InstanceSnapshot candidates, ServiceInstanceListSupplier supplier,
			Picking context) {
		if (!candidates.isEmpty()) {
			return (candidates.totalEffectiveWeight() > 0) ? NoInstanceReason.NONE_CHOSEN
					: NoInstanceReason.ALL_WEIGHTS_ZERO;
		}
		NoInstanceReason reason = context.emptyReason();
		if (reason != null) {
			return reason;
		}
		// Atlas's stage ran in a chain it does not top (not inline): it cannot say.
		return (AtlasServiceInstanceListSupplier.find(supplier) != null) ? NoInstanceReason.NO_CANDIDATES
				: NoInstanceReason.NO_INSTANCES;
	}

	/**
	 * The empty response of this service for a reason.
	 * @param reason why there is no instance
	 * @return a shared, immutable response
	 */
	NoInstanceResponse noInstance(NoInstanceReason reason) {
		return Objects.requireNonNull(this.noInstance.get(reason), "a response for every reason");
	}

	/**
	 * The service this load balancer serves.
	 * @return the service id
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * The strategy in force.
	 * @return the strategy of the current version
	 */
	public LoadBalancingStrategy strategy() {
		return this.pipeline.current().strategy();
	}

	/**
	 * The name of the strategy in force, as registered and configured.
	 * @return e.g. {@code weighted-random}
	 */
	public String strategyName() {
		return this.pipeline.current().strategyName();
	}

	/**
	 * The service's routing this load balancer chooses with.
	 * @return the holder of the version in force
	 */
	public ServicePipeline pipeline() {
		return this.pipeline;
	}

	@Override
	public String toString() {
		return "AtlasLoadBalancer[service=" + this.serviceId + ", strategy=" + strategyName() + ']';
	}

	/**
	 * A supplier chain as the load balancer uses it.
	 *
	 * @param supplier the top of the chain
	 * @param inline Atlas's stage when it is applied inline, else {@code null}
	 * @param stageBelow whether Atlas's stage is in the chain below a supplier that is
	 * not Spring's retry-aware one
	 */
	private record Chain(@Nullable ServiceInstanceListSupplier supplier,
			@Nullable AtlasServiceInstanceListSupplier inline, boolean stageBelow) {
	}

	/**
	 * A load balancer with one version of its routing.
	 */
	static final class Bound {

		final AtlasLoadBalancer balancer;

		final Pipeline version;

		Bound(AtlasLoadBalancer balancer, Pipeline version) {
			this.balancer = balancer;
			this.version = version;
		}

	}

	/**
	 * What the choosing operator hands a strategy: a {@link PickContext} that learns its
	 * candidates just before the strategy runs.
	 */
	interface Picking extends PickContext {

		/**
		 * Sets the candidates that positions refer to.
		 * @param candidates the snapshot the strategy is about to choose from
		 */
		void candidates(InstanceSnapshot candidates);

		/**
		 * Told by Atlas's stage, inline, why it leaves no candidate.
		 * @param reason the reason
		 */
		void emptyBecause(NoInstanceReason reason);

		/**
		 * What {@link #emptyBecause} was told.
		 * @return the reason, or {@code null} when the stage did not run inline or left
		 * candidates
		 */
		@Nullable NoInstanceReason emptyReason();

	}

}
