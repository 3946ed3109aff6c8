package dev.atlas.autoconfigure.orca;

import dev.atlas.loadbalancer.orca.LoadReport;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerRequestTransformer;
import org.springframework.http.HttpRequest;

/**
 * Asks for a load report ({@value LoadReport#FORMAT_HEADER}{@code : TEXT}) on
 * {@code @LoadBalanced} RestTemplate and RestClient calls to a service whose strategy is
 * {@code weighted-round-robin}. Spring Cloud applies it only to load-balanced calls,
 * after the instance is chosen, so no other host is asked. Thread-safe.
 *
 * @since 0.1.0
 */
public class LoadReportRequestTransformer implements LoadBalancerRequestTransformer {

	private final ReportedLoads loads;

	/**
	 * Creates the transformer.
	 * @param loads says which services want reports
	 */
	public LoadReportRequestTransformer(ReportedLoads loads) {
		this.loads = loads;
	}

	@Override
	public HttpRequest transformRequest(HttpRequest request, @Nullable ServiceInstance instance) {
		if (instance != null && this.loads.wanted(instance.getServiceId())
				&& !request.getHeaders().containsHeader(LoadReport.FORMAT_HEADER)) {
			request.getHeaders().set(LoadReport.FORMAT_HEADER, "TEXT");
		}
		return request;
	}

}
