package dev.atlas.autoconfigure.client;

import java.net.URI;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.NoInstanceAvailableException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.blocking.client.BlockingLoadBalancerClient;

/**
 * Spring Cloud's {@link BlockingLoadBalancerClient} (behind RestTemplate, RestClient and
 * Feign, with or without spring-retry), except that when Atlas chooses no instance for an
 * HTTP client's request, {@link #choose(String, Request)} raises a
 * {@link NoInstanceAvailableException} naming the service and the reason (after the
 * {@code DISCARD} lifecycle callbacks) instead of returning {@code null}, which the
 * callers of this SPI would turn into a message without the reason (or, with
 * spring-retry, into {@code IllegalArgumentException: Service Instance cannot be null}).
 * {@link #choose(String)} and requests that are not an HTTP client's keep Spring Cloud's
 * contract: {@code null}. Thread-safe.
 *
 * @since 0.1.0
 */
public class AtlasBlockingLoadBalancerClient extends BlockingLoadBalancerClient {

	private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;

	/**
	 * Creates the client.
	 * @param factory the load balancers of every service
	 */
	public AtlasBlockingLoadBalancerClient(ReactiveLoadBalancer.Factory<ServiceInstance> factory) {
		super(factory);
		this.factory = factory;
	}

	/**
	 * Chooses an instance for a request.
	 * @param serviceId the service
	 * @param request the request
	 * @return the chosen instance, or {@code null} when there is none and the request is
	 * not an HTTP client's (or the service has no load balancer)
	 * @throws NoInstanceAvailableException when Atlas chooses none for an HTTP client's
	 * request
	 */
	@Override
	public <T> @Nullable ServiceInstance choose(String serviceId, Request<T> request) {
		ReactiveLoadBalancer<ServiceInstance> loadBalancer = this.factory.getInstance(serviceId);
		if (loadBalancer == null) {
			return null;
		}
		// Atlas's own balancer answers without Mono.block(), which snapshots every
		// ThreadLocal per call when Reactor's automatic context propagation is on.
		Response<ServiceInstance> response = (loadBalancer instanceof AtlasLoadBalancer atlas)
				? atlas.chooseAndWait(request) : Mono.from(loadBalancer.choose(request)).block();
		if (response == null) {
			return null;
		}
		NoInstanceAvailableException none = NoInstanceErrors.discarded(this.factory, serviceId, request, response);
		if (none != null) {
			throw none;
		}
		return response.getServer();
	}

	/**
	 * The instance's URI for a request: Spring Cloud's, from the instance's host in
	 * brackets when it is an IPv6 literal listed without them (see {@link BracketedHost}:
	 * Spring Cloud fails on such a host for a URI with percent-encoded parts).
	 * @param serviceInstance the chosen instance
	 * @param original the request's URI, with the service id as host
	 * @return the URI to call
	 */
	@Override
	public URI reconstructURI(ServiceInstance serviceInstance, URI original) {
		return super.reconstructURI(BracketedHost.forUri(serviceInstance), original);
	}

}
