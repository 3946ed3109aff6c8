package dev.atlas.autoconfigure.orca;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.orca.LoadReport;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * Load reports at a Spring Cloud Gateway, on the headers of each proxied request and
 * answer:
 * <ul>
 * <li>request: asks the chosen instance for a report ({@value LoadReport#FORMAT_HEADER}:
 * {@code TEXT}) when the route's service uses {@code weighted-round-robin};</li>
 * <li>answer: takes the instance's report into the service's reported load, then removes
 * the {@value LoadReport#HEADER} header, so that the gateway's clients do not learn the
 * instances' load (unless {@code atlas.load-report.gateway-forward=true}).</li>
 * </ul>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class LoadReportHeadersFilter implements HttpHeadersFilter {

	private final ReportedLoads loads;

	private final Type type;

	private final boolean forward;

	private LoadReportHeadersFilter(ReportedLoads loads, Type type, boolean forward) {
		this.loads = loads;
		this.type = type;
		this.forward = forward;
	}

	/**
	 * The filter of the proxied requests: asks for a report where it is wanted.
	 * @param loads says which services want reports
	 * @return the filter
	 */
	public static LoadReportHeadersFilter asking(ReportedLoads loads) {
		return new LoadReportHeadersFilter(loads, Type.REQUEST, false);
	}

	/**
	 * The filter of the proxied answers: reads the report where it is wanted, and removes
	 * it unless forwarded.
	 * @param loads the reported load of each service
	 * @param forward whether answers keep their report on their way to the client
	 * @return the filter
	 */
	public static LoadReportHeadersFilter reading(ReportedLoads loads, boolean forward) {
		return new LoadReportHeadersFilter(loads, Type.RESPONSE, forward);
	}

	@Override
	public HttpHeaders filter(HttpHeaders input, ServerWebExchange exchange) {
		ServiceInstance chosen = chosen(exchange);
		String serviceId = (chosen != null) ? chosen.getServiceId() : null;
		boolean wanted = chosen != null && this.loads.wanted(serviceId);
		if (this.type == Type.REQUEST) {
			if (!wanted || input.containsHeader(LoadReport.FORMAT_HEADER)) {
				return input;
			}
			HttpHeaders asking = new HttpHeaders();
			asking.addAll(input);
			asking.set(LoadReport.FORMAT_HEADER, "TEXT");
			return asking;
		}
		if (!input.containsHeader(LoadReport.HEADER)) {
			return input;
		}
		if (wanted && chosen != null && serviceId != null) {
			LoadReport report = LoadReport.parse(input.getFirst(LoadReport.HEADER));
			if (report != null) {
				this.loads.of(serviceId).record(InstanceKey.of(chosen), report);
			}
		}
		if (this.forward) {
			return input;
		}
		HttpHeaders filtered = new HttpHeaders();
		input.forEach((name, values) -> {
			if (!LoadReport.HEADER.equalsIgnoreCase(name)) {
				filtered.addAll(name, values);
			}
		});
		return filtered;
	}

	private static @Nullable ServiceInstance chosen(ServerWebExchange exchange) {
		Response<ServiceInstance> response = exchange
			.getAttribute(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR);
		return BracketedHost.chosen(response);
	}

	@Override
	public boolean supports(Type type) {
		return type == this.type;
	}

}
