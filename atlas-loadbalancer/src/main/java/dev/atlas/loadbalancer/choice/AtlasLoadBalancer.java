package dev.atlas.loadbalancer.choice;

import java.util.List;
import java.util.Objects;

import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.routing.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
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
 * from the {@link ServiceInstanceListSupplier} chain and lets a {@link Balancer} choose
 * among them.
 *
 * <p>
 * Never signals an error for a missing choice: an empty candidate list, an empty supplier
 * or a rejection by the balancer all give Spring's {@link EmptyResponse} (which the HTTP
 * integrations turn into a 503). The chosen instance is the very object the supplier
 * produced. Thread-safe.
 */
public class AtlasLoadBalancer implements ReactorServiceInstanceLoadBalancer {

	static final EmptyResponse EMPTY = new EmptyResponse();

	private final String serviceId;

	private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;

	private final Balancer balancer;

	private final InstanceStats stats;

	/**
	 * Creates the load balancer of one service.
	 * @param serviceId not {@code null}
	 * @param supplierProvider the supplier chain, typically
	 * {@code LoadBalancerClientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class)};
	 * when it yields nothing, every request gets an empty response
	 * @param balancer the algorithm; not {@code null}
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			Balancer balancer) {
		this(serviceId, supplierProvider, balancer, new InstanceStats(), new CompositeMeterRegistry());
	}

	/**
	 * Creates the load balancer of one service, with its meter.
	 * @param serviceId not {@code null}
	 * @param supplierProvider the supplier chain; when it yields nothing, every request
	 * gets an empty response
	 * @param balancer the algorithm; not {@code null}
	 * @param stats this service's per-instance request counts (fed by the request
	 * lifecycle), shown by the actuator view and summed by {@value #PICKS_METER}; not
	 * {@code null}
	 * @param meterRegistry where {@value #PICKS_METER} is registered; not {@code null}
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			Balancer balancer, InstanceStats stats, MeterRegistry meterRegistry) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.supplierProvider = Objects.requireNonNull(supplierProvider, "supplierProvider");
		this.balancer = Objects.requireNonNull(balancer, "balancer");
		this.stats = Objects.requireNonNull(stats, "stats");
		// Read when scraped from the per-instance request counts: a pick itself writes no
		// shared counter.
		FunctionCounter.builder(PICKS_METER, stats, InstanceStats::totalRequests)
			.description("Requests sent to instances chosen by Atlas (each attempt counts)")
			.tag("service", serviceId)
			.tag("strategy", balancer.strategy().value())
			.register(meterRegistry);
	}

	/**
	 * Counter of requests sent to chosen instances (each attempt counts), read from
	 * {@link InstanceStats}; tags {@code service}, {@code strategy}.
	 */
	public static final String PICKS_METER = "atlas.picks";

	/**
	 * Chooses an instance for a request from the first candidate list the supplier chain
	 * emits.
	 * @param request the request, handed to the supplier chain (gray routing reads its
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
		return FirstListChoice.over(supplier.get(request), this, supplier);
	}

	/**
	 * Atlas's stage when it is the top of the chain, or right below Spring's retry-aware
	 * supplier (whose only job, leaving out the previously failed instance, the stage
	 * does too, by id rather than by {@code equals}): then the stage is applied inside
	 * the choosing operator, one Reactor operator less per request. Exact classes only: a
	 * subclass may do more, and any other supplier on top is subscribed to as it is.
	 */
	private static @Nullable AtlasServiceInstanceListSupplier inlineStage(ServiceInstanceListSupplier supplier) {
		ServiceInstanceListSupplier candidate = supplier;
		if (candidate.getClass() == RetryAwareServiceInstanceListSupplier.class) {
			candidate = ((RetryAwareServiceInstanceListSupplier) candidate).getDelegate();
		}
		return (candidate.getClass() == AtlasServiceInstanceListSupplier.class)
				? (AtlasServiceInstanceListSupplier) candidate : null;
	}

	Response<ServiceInstance> respond(ServiceInstanceListSupplier supplier,
			@Nullable List<ServiceInstance> candidates) {
		if (candidates == null) {
			return EMPTY;
		}
		InstanceSnapshot snapshot = this.balancer.snapshotOf(candidates);
		int index = this.balancer.chooseIndex(snapshot);
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
	 * @return never {@code null}
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * The per-instance statistics.
	 * @return never {@code null}
	 */
	public InstanceStats stats() {
		return this.stats;
	}

	/**
	 * The algorithm in use.
	 * @return never {@code null}
	 */
	public Balancer balancer() {
		return this.balancer;
	}

	@Override
	public String toString() {
		return "AtlasLoadBalancer[service=" + this.serviceId + ", strategy=" + this.balancer.strategy() + ']';
	}

}
