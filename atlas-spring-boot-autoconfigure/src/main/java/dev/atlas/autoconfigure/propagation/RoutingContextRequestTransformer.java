package dev.atlas.autoconfigure.propagation;

import dev.atlas.loadbalancer.context.RoutingContextHolder;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerRequestTransformer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;

/**
 * Writes the routing context's headers on outbound {@code @LoadBalanced} RestTemplate and
 * RestClient calls. Spring Cloud applies it (in its plain and its retrying load-balancer
 * interceptor) only to load-balanced calls, after the instance is chosen, whatever the
 * order of the application's own interceptors; the routing decision itself reads the
 * context directly.
 *
 * @since 0.1.0
 */
public class RoutingContextRequestTransformer implements LoadBalancerRequestTransformer {

	private final PropagatedHeaders headers;

	/**
	 * Creates the transformer.
	 * @param headers what to write
	 */
	public RoutingContextRequestTransformer(PropagatedHeaders headers) {
		this.headers = headers;
	}

	@Override
	public HttpRequest transformRequest(HttpRequest request, @Nullable ServiceInstance instance) {
		HttpHeaders outbound = request.getHeaders();
		this.headers.write(RoutingContextHolder.get(), outbound::containsHeader, outbound::add);
		return request;
	}

}
