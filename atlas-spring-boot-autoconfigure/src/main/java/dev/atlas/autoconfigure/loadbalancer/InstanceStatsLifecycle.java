package dev.atlas.autoconfigure.loadbalancer;

import java.util.Objects;

import dev.atlas.loadbalancer.stats.InstanceStats;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.TimedRequestContext;

/**
 * Counts requests sent and in flight per instance ({@link InstanceStats}) from Spring
 * Cloud LoadBalancer's request lifecycle, for the actuator view and the
 * {@code atlas.picks} meter. Thread-safe.
 */
class InstanceStatsLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

	private final InstanceStats stats;

	InstanceStatsLifecycle(InstanceStats stats) {
		this.stats = stats;
	}

	@Override
	public void onStart(Request<Object> request) {
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
		if (lbResponse != null && lbResponse.hasServer()) {
			if (request != null && request.getContext() instanceof TimedRequestContext timed
					&& timed.getRequestStartTime() == 0) {
				timed.setRequestStartTime(System.nanoTime());
			}
			this.stats.started(Objects.requireNonNull(lbResponse.getServer(), "hasServer()"));
		}
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		Response<ServiceInstance> response = completionContext.getLoadBalancerResponse();
		if (response != null && response.hasServer()
				&& completionContext.status() != CompletionContext.Status.DISCARD) {
			this.stats.completed(Objects.requireNonNull(response.getServer(), "hasServer()"),
					durationNanos(completionContext.getLoadBalancerRequest()));
		}
	}

	private static long durationNanos(Request<Object> request) {
		if (request != null && request.getContext() instanceof TimedRequestContext timed
				&& timed.getRequestStartTime() != 0) {
			return Math.max(0, System.nanoTime() - timed.getRequestStartTime());
		}
		return -1;
	}

}
