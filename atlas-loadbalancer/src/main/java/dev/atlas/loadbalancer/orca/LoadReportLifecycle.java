package dev.atlas.loadbalancer.orca;

import java.util.Objects;
import java.util.function.BooleanSupplier;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.support.CallbackFailures;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;

/**
 * Feeds a service's {@link ReportedLoad} from Spring Cloud LoadBalancer's request
 * lifecycle: the {@value LoadReport#HEADER} header of each answer (RestTemplate,
 * RestClient, WebClient and Feign pass the answer's headers), read with
 * {@link LoadReport#parse}. A header that cannot be read is logged once per instance
 * (WARN) and changes nothing. Thread-safe.
 *
 * @since 0.1.0
 */
public class LoadReportLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {

	private static final Logger log = LoggerFactory.getLogger(LoadReportLifecycle.class);

	private final String serviceId;

	private final ReportedLoad load;

	private final BooleanSupplier wanted;

	/**
	 * Creates the feed of one service.
	 * @param serviceId the service, for messages
	 * @param load its reported load
	 * @param wanted whether reports are read now (the service's strategy uses them); when
	 * not, an answer is left alone
	 */
	public LoadReportLifecycle(String serviceId, ReportedLoad load, BooleanSupplier wanted) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.load = Objects.requireNonNull(load, "load");
		this.wanted = Objects.requireNonNull(wanted, "wanted");
	}

	/**
	 * The reported load this feeds (the actuator view).
	 * @return the service's reported load
	 */
	public ReportedLoad load() {
		return this.load;
	}

	@Override
	public void onStart(Request<Object> request) {
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		if (!this.wanted.getAsBoolean()) {
			return;
		}
		try {
			ServiceInstance server = BracketedHost.chosen(completionContext.getLoadBalancerResponse());
			if (server == null) {
				this.load.answered();
				return;
			}
			this.load.recordHeader(this.serviceId, InstanceKey.of(server),
					header(completionContext.getClientResponse()));
		}
		catch (RuntimeException ex) {
			// A callback must never hide the request's own outcome from the caller.
			CallbackFailures.swallowed(log, "onComplete", ex);
		}
	}

	private static @Nullable String header(@Nullable Object clientResponse) {
		if (clientResponse instanceof ResponseData data && data.getHeaders() != null) {
			return data.getHeaders().getFirst(LoadReport.HEADER);
		}
		return null;
	}

}
