package dev.atlas.loadbalancer.choice;

import java.util.List;
import java.util.Objects;

import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.Counter;
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
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * Atlas's {@link ReactorServiceInstanceLoadBalancer}: pulls the candidates for a request from the
 * {@link ServiceInstanceListSupplier} chain and lets a {@link Balancer} choose among them.
 *
 * <p>Never signals an error for a missing choice: an empty candidate list, an empty supplier or a
 * rejection by the balancer all give Spring's {@link EmptyResponse} (which the HTTP integrations turn into
 * a 503). The chosen instance is the very object the supplier produced. Thread-safe.
 */
public class AtlasLoadBalancer implements ReactorServiceInstanceLoadBalancer {

	private static final EmptyResponse EMPTY = new EmptyResponse();

	private final String serviceId;

	private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;

	private final Balancer balancer;

	private final InstanceStats stats;

	private final Counter picks;

	/**
	 * Creates the load balancer of one service.
	 * @param serviceId not {@code null}
	 * @param supplierProvider the supplier chain, typically
	 *     {@code LoadBalancerClientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class)};
	 *     when it yields nothing, every request gets an empty response
	 * @param balancer the algorithm; not {@code null}
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			Balancer balancer) {
		this(serviceId, supplierProvider, balancer, new InstanceStats(), new CompositeMeterRegistry());
	}

	/**
	 * Creates the load balancer of one service, recording picks.
	 * @param serviceId not {@code null}
	 * @param supplierProvider the supplier chain; when it yields nothing, every request gets an empty response
	 * @param balancer the algorithm; not {@code null}
	 * @param stats per-instance picks are recorded here; not {@code null}
	 * @param meterRegistry where {@value #PICKS_METER} is registered; not {@code null}
	 */
	public AtlasLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
			Balancer balancer, InstanceStats stats, MeterRegistry meterRegistry) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.supplierProvider = Objects.requireNonNull(supplierProvider, "supplierProvider");
		this.balancer = Objects.requireNonNull(balancer, "balancer");
		this.stats = Objects.requireNonNull(stats, "stats");
		this.picks = Counter.builder(PICKS_METER)
			.description("Instances chosen by Atlas")
			.tag("service", serviceId)
			.tag("strategy", balancer.strategy().value())
			.register(meterRegistry);
	}

	/** Counter of choices; tags {@code service}, {@code strategy}. */
	public static final String PICKS_METER = "atlas.picks";

	@Override
	@SuppressWarnings({ "rawtypes", "unchecked" })
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceInstanceListSupplier supplier = this.supplierProvider
			.getIfAvailable(NoopServiceInstanceListSupplier::new);
		return supplier.get(request)
			.next()
			.map((candidates) -> respond(supplier, candidates))
			.defaultIfEmpty((Response) EMPTY);
	}

	private Response<ServiceInstance> respond(ServiceInstanceListSupplier supplier,
			@Nullable List<ServiceInstance> candidates) {
		ServiceInstance chosen = (candidates != null) ? this.balancer.choose(candidates) : null;
		if (chosen == null) {
			return EMPTY;
		}
		this.picks.increment();
		this.stats.picked(chosen);
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
