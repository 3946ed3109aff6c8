package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import dev.atlas.loadbalancer.choice.Balancer;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
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
 * or a rejection by the strategy all give Spring's {@link EmptyResponse} (which the HTTP
 * integrations turn into a 503). The chosen instance is the very object the supplier
 * produced. Thread-safe.
 */
public class AtlasLoadBalancer implements ReactorServiceInstanceLoadBalancer {

	static final EmptyResponse EMPTY = new EmptyResponse();

	private final String serviceId;

	private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;

	private final String strategyName;

	private final LoadBalancingStrategy strategy;

	private final Function<List<ServiceInstance>, InstanceSnapshot> snapshots;

	final LiveStats stats;

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
		this(serviceId, supplierProvider, balancer.name(), balancer, balancer::snapshotOf, LiveStats.NONE);
	}

	/**
	 * Creates the load balancer of one service.
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
		this(serviceId, supplierProvider, strategyName, strategy, snapshots::snapshotOf, stats);
	}

	private AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			String strategyName, LoadBalancingStrategy strategy,
			Function<List<ServiceInstance>, InstanceSnapshot> snapshots, LiveStats stats) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.strategyName = Objects.requireNonNull(strategyName, "strategyName");
		this.supplierProvider = Objects.requireNonNull(supplierProvider, "supplierProvider");
		this.strategy = Objects.requireNonNull(strategy, "strategy");
		this.snapshots = snapshots;
		this.stats = Objects.requireNonNull(stats, "stats");
	}

	/**
	 * Chooses an instance for a request from the first candidate list the supplier chain
	 * emits.
	 * @param request the request, handed to the supplier chain (filters read its
	 * headers); may be {@code null}
	 * @return a {@code Mono} of exactly one response: the chosen instance, or an
	 * {@code EmptyResponse} when there is none to choose; it signals an error if the
	 * supplier chain does or if routing or choosing throws (a bug: bad input never does)
	 */
	@Override
	@SuppressWarnings({ "rawtypes", "unchecked" })
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceInstanceListSupplier supplier = this.supplierProvider
			.getIfAvailable(NoopServiceInstanceListSupplier::new);
		AtlasServiceInstanceListSupplier stage = inlineStage(supplier);
		if (stage != null) {
			return FirstListChoice.throughStage(stage, request, RoutingContextHolder.get(), this);
		}
		return FirstListChoice.over(supplier.get(request), request, this, supplier);
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
	 * @param context the request and live statistics; its candidates are set here
	 * @return the chosen instance, or {@link #EMPTY}
	 */
	Response<ServiceInstance> respond(ServiceInstanceListSupplier supplier, @Nullable List<ServiceInstance> candidates,
			Picking context) {
		if (candidates == null) {
			return EMPTY;
		}
		InstanceSnapshot snapshot = this.snapshots.apply(candidates);
		context.candidates(snapshot);
		int index = this.strategy.choose(snapshot, context);
		if (index < 0) {
			return EMPTY;
		}
		ServiceInstance chosen = snapshot.get(index);
		if (supplier instanceof SelectedInstanceCallback callback) {
			callback.selectedServiceInstance(chosen);
		}
		return new DefaultResponse(chosen);
	}

	/**
	 * The service this load balancer serves.
	 * @return the service id
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * The strategy in use.
	 * @return the strategy
	 */
	public LoadBalancingStrategy strategy() {
		return this.strategy;
	}

	/**
	 * The name of the strategy in use, as registered and configured.
	 * @return e.g. {@code weighted-random}
	 */
	public String strategyName() {
		return this.strategyName;
	}

	@Override
	public String toString() {
		return "AtlasLoadBalancer[service=" + this.serviceId + ", strategy=" + this.strategyName + ']';
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

	}

}
