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
 * <li>request: removes the {@value LoadReport#FORMAT_HEADER} header a client sent (a
 * client does not decide what the instances report), and asks the chosen instance for a
 * report ({@code TEXT}) when the route's service uses {@code weighted-round-robin};</li>
 * <li>answer: for a service using {@code weighted-round-robin}, takes the instance's
 * report into the service's reported load (an unreadable one is logged once per instance
 * and ignored; every answer, with a report or without, counts, so that weights expire
 * when instances stop reporting), then removes the {@value LoadReport#HEADER} header, so
 * that the gateway's clients do not learn the instances' load (unless
 * {@code atlas.load-report.gateway-forward=true}).</li>
 * </ul>
 * Without Atlas's load balancer (no {@link ReportedLoads}), nothing is asked for or read,
 * and reports are still removed. Thread-safe.
 *
 * @since 0.1.0
 */
public final class LoadReportHeadersFilter implements HttpHeadersFilter {

	private final @Nullable ReportedLoads loads;

	private final Type type;

	private final boolean forward;

	private LoadReportHeadersFilter(@Nullable ReportedLoads loads, Type type, boolean forward) {
		this.loads = loads;
		this.type = type;
		this.forward = forward;
	}

	/**
	 * The filter of the proxied requests.
	 * @param loads says which services want reports; {@code null} when Atlas is not the
	 * load balancer
	 * @return the filter
	 */
	public static LoadReportHeadersFilter asking(@Nullable ReportedLoads loads) {
		return new LoadReportHeadersFilter(loads, Type.REQUEST, false);
	}

	/**
	 * The filter of the proxied answers.
	 * @param loads the reported load of each service; {@code null} when Atlas is not the
	 * load balancer
	 * @param forward whether answers keep their report on their way to the client
	 * @return the filter
	 */
	public static LoadReportHeadersFilter reading(@Nullable ReportedLoads loads, boolean forward) {
		return new LoadReportHeadersFilter(loads, Type.RESPONSE, forward);
	}

	@Override
	public HttpHeaders filter(HttpHeaders input, ServerWebExchange exchange) {
		ServiceInstance chosen = chosen(exchange);
		String serviceId = (chosen != null) ? chosen.getServiceId() : null;
		ReportedLoads reported = this.loads;
		boolean wanted = reported != null && chosen != null && reported.wanted(serviceId);
		if (this.type == Type.REQUEST) {
			if (!wanted && !input.containsHeader(LoadReport.FORMAT_HEADER)) {
				return input;
			}
			HttpHeaders asking = without(input, LoadReport.FORMAT_HEADER);
			if (wanted) {
				asking.set(LoadReport.FORMAT_HEADER, "TEXT");
			}
			return asking;
		}
		if (wanted && reported != null && chosen != null && serviceId != null) {
			// every answer counts, with a report or without: weights expire while answers
			// keep coming without one
			reported.of(serviceId).recordHeader(serviceId, InstanceKey.of(chosen), input.getFirst(LoadReport.HEADER));
		}
		if (this.forward || !input.containsHeader(LoadReport.HEADER)) {
			return input;
		}
		return without(input, LoadReport.HEADER);
	}

	private static HttpHeaders without(HttpHeaders input, String header) {
		HttpHeaders filtered = new HttpHeaders();
		input.forEach((name, values) -> {
			if (!header.equalsIgnoreCase(name)) {
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
