package dev.atlas.autoconfigure.orca;

import dev.atlas.loadbalancer.orca.LoadReport;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.web.reactive.function.client.ClientRequest;

/**
 * Asks for a load report ({@value LoadReport#FORMAT_HEADER}{@code : TEXT}) on
 * {@code @LoadBalanced} WebClient calls to a service whose strategy is
 * {@code weighted-round-robin}; applied by Spring Cloud to load-balanced calls only.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class LoadReportClientRequestTransformer implements LoadBalancerClientRequestTransformer {

	private final ReportedLoads loads;

	/**
	 * Creates the transformer.
	 * @param loads says which services want reports
	 */
	public LoadReportClientRequestTransformer(ReportedLoads loads) {
		this.loads = loads;
	}

	@Override
	public ClientRequest transformRequest(ClientRequest request, ServiceInstance instance) {
		if (instance == null || !this.loads.wanted(instance.getServiceId())
				|| request.headers().containsHeader(LoadReport.FORMAT_HEADER)) {
			return request;
		}
		return ClientRequest.from(request).header(LoadReport.FORMAT_HEADER, "TEXT").build();
	}

}
