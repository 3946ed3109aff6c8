package dev.atlas.autoconfigure.client;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

import dev.atlas.loadbalancer.instance.InstanceKey;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle;

/**
 * Spring Cloud LoadBalancer's {@code loadbalancer.requests.*} meters (same names, tags
 * and values), with one {@code loadbalancer.requests.active} gauge per instance identity.
 * Spring Cloud's lifecycle keeps an instance's in-flight count under the
 * {@link ServiceInstance} object's {@code equals}, which for Nacos's and Spring Cloud's
 * own instances includes the metadata: after a weight or tag change the registry's new
 * object got a second count that no gauge read (Micrometer keeps the first gauge of a
 * name and tags and warns {@code Gauge has been already registered}). This subclass hands
 * Spring Cloud's lifecycle a stand-in that is equal for equal gauge tags: service id plus
 * {@link InstanceKey} (instance id, host, port). Thread-safe, like Spring Cloud's.
 */
class IdentityKeyedStatsLifecycle extends MicrometerStatsLoadBalancerLifecycle {

	/**
	 * @param meterRegistry where the meters are registered
	 * @param loadBalancerFactory the services' load-balancer properties (for the request
	 * tags)
	 */
	IdentityKeyedStatsLifecycle(MeterRegistry meterRegistry,
			ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancerFactory) {
		super(meterRegistry, loadBalancerFactory);
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
		super.onStartRequest(request, byIdentity(lbResponse));
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		Response<ServiceInstance> response = completionContext.getLoadBalancerResponse();
		Response<ServiceInstance> byIdentity = byIdentity(response);
		super.onComplete((byIdentity == response) ? completionContext
				: new CompletionContext<>(completionContext.status(), completionContext.getThrowable(),
						completionContext.getLoadBalancerRequest(), byIdentity, completionContext.getClientResponse()));
	}

	private static @Nullable Response<ServiceInstance> byIdentity(@Nullable Response<ServiceInstance> response) {
		if (response == null || !response.hasServer()) {
			return response;
		}
		return new DefaultResponse(new SameInstance(Objects.requireNonNull(response.getServer(), "hasServer()")));
	}

	/**
	 * An instance that reads as the given one and equals another of the same service id,
	 * instance id, host and port, whatever its metadata.
	 */
	private static final class SameInstance implements ServiceInstance {

		private final ServiceInstance instance;

		SameInstance(ServiceInstance instance) {
			this.instance = instance;
		}

		@Override
		public String getServiceId() {
			return this.instance.getServiceId();
		}

		@Override
		public @Nullable String getInstanceId() {
			return this.instance.getInstanceId();
		}

		@Override
		public String getHost() {
			return this.instance.getHost();
		}

		@Override
		public int getPort() {
			return this.instance.getPort();
		}

		@Override
		public boolean isSecure() {
			return this.instance.isSecure();
		}

		@Override
		public URI getUri() {
			return this.instance.getUri();
		}

		@Override
		public @Nullable Map<String, String> getMetadata() {
			return this.instance.getMetadata();
		}

		@Override
		public @Nullable String getScheme() {
			return this.instance.getScheme();
		}

		@Override
		public boolean equals(@Nullable Object other) {
			return other instanceof SameInstance same && InstanceKey.same(this.instance, same.instance)
					&& Objects.equals(this.instance.getServiceId(), same.instance.getServiceId());
		}

		@Override
		public int hashCode() {
			return ((31 * Objects.hashCode(getServiceId()) + Objects.hashCode(getInstanceId())) * 31
					+ Objects.hashCode(getHost())) * 31 + getPort();
		}

	}

}
