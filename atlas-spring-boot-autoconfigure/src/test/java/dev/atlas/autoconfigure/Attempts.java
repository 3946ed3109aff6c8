package dev.atlas.autoconfigure;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Records, at a caller, every load-balanced attempt (each retry counts): the port it was
 * sent to and when it started, and when it completed and whether with a 2xx answer (start
 * and completion are matched by Spring Cloud's request object of the attempt). A bean of
 * the caller's root context, which Spring Cloud LoadBalancer calls for every service (it
 * reads lifecycle beans of the parent context too). Times are epoch ms
 * ({@link System#currentTimeMillis()}), the clock of Atlas's outlier detection.
 * Thread-safe.
 */
public final class Attempts implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

	private final List<Event> starts = new CopyOnWriteArrayList<>();

	private final List<Event> completions = new CopyOnWriteArrayList<>();

	private final Map<Object, Long> started = Collections.synchronizedMap(new IdentityHashMap<>());

	@Override
	public void onStart(Request<Object> request) {
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
		if (lbResponse.hasServer()) {
			long now = System.currentTimeMillis();
			this.started.put(request, now);
			this.starts.add(new Event(lbResponse.getServer().getPort(), now, now, false));
		}
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		Response<ServiceInstance> response = completionContext.getLoadBalancerResponse();
		if (response == null || !response.hasServer()) {
			return;
		}
		boolean ok = completionContext.status() == CompletionContext.Status.SUCCESS
				&& completionContext.getClientResponse() instanceof ResponseData data && data.getHttpStatus() != null
				&& data.getHttpStatus().is2xxSuccessful();
		Long startedAt = this.started.remove(completionContext.getLoadBalancerRequest());
		long now = System.currentTimeMillis();
		this.completions.add(new Event(response.getServer().getPort(), (startedAt != null) ? startedAt : -1, now, ok));
	}

	/**
	 * The attempts started so far, in order of start.
	 * @return a snapshot
	 */
	public List<Event> starts() {
		return List.copyOf(this.starts);
	}

	/**
	 * The attempts completed so far, in order of completion.
	 * @return a snapshot
	 */
	public List<Event> completions() {
		return List.copyOf(this.completions);
	}

	/**
	 * One attempt's start or completion.
	 *
	 * @param port the instance's port
	 * @param startedAt when the attempt started, epoch ms; -1 when not known
	 * @param at when it started (a start) or completed (a completion), epoch ms
	 * @param ok for a completion, whether it was a 2xx answer; {@code false} for a start
	 */
	public record Event(int port, long startedAt, long at, boolean ok) {
	}

	/**
	 * {@link WhoApp} with an {@link Attempts} bean: a caller that records its attempts.
	 */
	@Configuration(proxyBeanMethods = false)
	@Import(WhoApp.class)
	public static class RecordingWhoApp {

		@Bean
		Attempts attempts() {
			return new Attempts();
		}

	}

}
