package dev.atlas.loadbalancer.pipeline;

import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.PickContext;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
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

	private final String serviceId;

	private final Map<NoInstanceReason, NoInstanceResponse> noInstance;

	private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;

	private final ServicePipeline pipeline;

	/**
	 * The choice with the version in force over the supplier chain in use, replaced when
	 * either changes (not per request). A plain field: a {@link Chooser} is immutable
	 * (final fields), so a thread that sees an older one only makes a new one.
	 */
	private Chooser chooser;

	private final LiveStats stats;

	private final InFlightLimit limit;

	/**
	 * The chain when the provider yields none: one for the load balancer's life, so that
	 * such requests keep one {@link Chooser} too.
	 */
	private final Supplier<ServiceInstanceListSupplier> noSupplier;

	/**
	 * Whether a subclass overrides {@link #choose}: then {@link #chooseAndWait} waits for
	 * what it emits, so that the override applies to the blocking clients too.
	 */
	private final boolean chooseOverridden;

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
		this(serviceId, supplierProvider, pipeline, stats, new InFlightLimit());
	}

	/**
	 * Creates the load balancer of one service with a per-instance in-flight limit.
	 * @param serviceId the service
	 * @param supplierProvider the supplier chain; when it yields nothing, every request
	 * gets an empty response
	 * @param pipeline the service's routing (see
	 * {@link #AtlasLoadBalancer(String, ObjectProvider, ServicePipeline, LiveStats)})
	 * @param stats this service's live per-instance statistics, given to the strategy;
	 * they hold the slots the limit reserves
	 * @param limit this service's per-instance in-flight limit, read for every pick
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			ServicePipeline pipeline, LiveStats stats, InFlightLimit limit) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.noInstance = NoInstanceResponse.allFor(serviceId);
		this.supplierProvider = Objects.requireNonNull(supplierProvider, "supplierProvider");
		this.pipeline = Objects.requireNonNull(pipeline, "pipeline");
		this.stats = Objects.requireNonNull(stats, "stats");
		this.limit = Objects.requireNonNull(limit, "limit");
		ServiceInstanceListSupplier none = new NoopServiceInstanceListSupplier();
		this.noSupplier = () -> none;
		this.chooser = new Chooser(pipeline, pipeline.current(), none, stats, limit, this.noInstance);
		this.chooseOverridden = overridesChoose(getClass());
	}

	private static boolean overridesChoose(Class<?> type) {
		try {
			return type.getMethod("choose", Request.class).getDeclaringClass() != AtlasLoadBalancer.class;
		}
		catch (NoSuchMethodException | SecurityException ex) {
			return true;
		}
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
		ServiceInstanceListSupplier supplier = this.supplierProvider.getIfAvailable(this.noSupplier);
		// One read of the rules in force for the whole request.
		return chooser(this.pipeline.current(), supplier).choose(request);
	}

	/**
	 * Chooses an instance for a request and waits for the response on the calling thread:
	 * what {@code choose(request).block()} returns, made without the {@code Mono} (the
	 * choice subscribes to the supplier chain itself) and without the snapshot of every
	 * registered {@code ThreadLocal} that {@code block()} takes per call when Reactor's
	 * automatic context propagation is on (Atlas's blocking client calls this). The
	 * choice sees the calling thread's routing context, read once before the list is
	 * fetched (with {@code block()}, a list fetched on another thread may see that
	 * thread's), and no other {@code ThreadLocal} (Spring Cloud's suppliers read none).
	 * Waits without a timeout, as {@code block()} does, only while the supplier chain
	 * fetches a list it has not cached. A subclass that overrides {@link #choose} is
	 * waited for through its {@code choose}. Thread-safe.
	 * @param request the request, as for {@link #choose}
	 * @return the response {@link #choose} would emit: an instance or a
	 * {@link NoInstanceResponse}; {@code null} only from an overriding {@code choose}
	 * that completes empty
	 * @throws IllegalStateException when it would have to wait on a non-blocking thread
	 * (an event loop), as {@code block()} refuses to; a response already there is
	 * returned
	 * @throws RuntimeException the error {@link #choose} signals, or when the thread is
	 * interrupted while the candidate list is being fetched (the fetch is cancelled)
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	public @Nullable Response<ServiceInstance> chooseAndWait(Request request) {
		if (this.chooseOverridden) {
			return choose(request).block();
		}
		ServiceInstanceListSupplier supplier = this.supplierProvider.getIfAvailable(this.noSupplier);
		return chooser(this.pipeline.current(), supplier).chooseAndWait(request);
	}

	/**
	 * The choice with a version over a supplier chain, made once per version and supplier
	 * object (the provider returns the same one for every request).
	 */
	private Chooser chooser(Pipeline version, ServiceInstanceListSupplier supplier) {
		Chooser chooser = this.chooser;
		if (chooser.version != version || chooser.supplier != supplier) {
			chooser = new Chooser(this.pipeline, version, supplier, this.stats, this.limit, this.noInstance);
			this.chooser = chooser;
		}
		return chooser;
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

}
