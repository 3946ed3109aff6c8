package dev.atlas.autoconfigure.orca;

import dev.atlas.loadbalancer.orca.LoadReport;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * WebFlux side of {@link LoadReporter}: writes the report on the answer of a request that
 * asks for one, and counts every request when it ends.
 *
 * @since 0.1.0
 */
public class LoadReportWebFilter implements WebFilter {

	private final LoadReporter reporter;

	/**
	 * Creates the filter.
	 * @param reporter counts and reports
	 */
	public LoadReportWebFilter(LoadReporter reporter) {
		this.reporter = reporter;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		String header = this.reporter.header(exchange.getRequest().getHeaders().getFirst(LoadReport.FORMAT_HEADER));
		if (header != null) {
			exchange.getResponse().getHeaders().set(LoadReport.HEADER, header);
		}
		return chain.filter(exchange).doFinally((signal) -> {
			HttpStatusCode status = exchange.getResponse().getStatusCode();
			this.reporter.served((status != null) ? status.value() : 200);
		});
	}

}
