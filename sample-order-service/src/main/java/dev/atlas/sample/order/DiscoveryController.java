package dev.atlas.sample.order;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /discovery/{serviceId}}: what this application's {@link DiscoveryClient}
 * sees right now. Scripts and tests poll it before the first load-balanced call, because
 * the balancer caches the instance list it sees first.
 */
@RestController
public class DiscoveryController {

	private final DiscoveryClient discoveryClient;

	/**
	 * @param discoveryClient the (composite) discovery client
	 */
	public DiscoveryController(DiscoveryClient discoveryClient) {
		this.discoveryClient = discoveryClient;
	}

	/**
	 * @param serviceId a service id, e.g. {@code user-service}
	 * @return the number of instances and each one's address and metadata
	 */
	@GetMapping("/discovery/{serviceId}")
	public Discovered discovered(@PathVariable String serviceId) {
		List<Instance> instances = this.discoveryClient.getInstances(serviceId).stream().map(Instance::of).toList();
		return new Discovered(serviceId, instances.size(), instances);
	}

	/**
	 * The response body.
	 *
	 * @param serviceId the service id
	 * @param count how many instances are visible
	 * @param instances the instances
	 */
	public record Discovered(String serviceId, int count, List<Instance> instances) {
	}

	/**
	 * One discovered instance.
	 *
	 * @param instanceId its instance id
	 * @param host its host
	 * @param port its port
	 * @param metadata its registry metadata
	 */
	public record Instance(@Nullable String instanceId, String host, int port, @Nullable Map<String, String> metadata) {

		static Instance of(ServiceInstance instance) {
			return new Instance(instance.getInstanceId(), instance.getHost(), instance.getPort(),
					instance.getMetadata());
		}

	}

}
