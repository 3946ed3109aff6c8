package dev.atlas.autoconfigure.orca;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.atlas.loadbalancer.orca.LoadReport;
import feign.Request;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.openfeign.loadbalancer.LoadBalancerFeignRequestTransformer;

/**
 * Asks for a load report ({@value LoadReport#FORMAT_HEADER}{@code : TEXT}) on Feign calls
 * to a service whose strategy is {@code weighted-round-robin}; applied by Spring Cloud
 * OpenFeign to load-balanced calls only. Thread-safe.
 *
 * @since 0.1.0
 */
public class LoadReportFeignRequestTransformer implements LoadBalancerFeignRequestTransformer {

	private final ReportedLoads loads;

	/**
	 * Creates the transformer.
	 * @param loads says which services want reports
	 */
	public LoadReportFeignRequestTransformer(ReportedLoads loads) {
		this.loads = loads;
	}

	@Override
	public Request transformRequest(Request request, ServiceInstance instance) {
		if (instance == null || !this.loads.wanted(instance.getServiceId())) {
			return request;
		}
		Map<String, Collection<String>> outbound = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
		outbound.putAll(request.headers());
		if (outbound.containsKey(LoadReport.FORMAT_HEADER)) {
			return request;
		}
		outbound.put(LoadReport.FORMAT_HEADER, List.of("TEXT"));
		return Request.create(request.httpMethod(), request.url(), outbound, request.body(), request.charset(),
				request.requestTemplate());
	}

}
