package dev.atlas.autoconfigure.orca;

import dev.atlas.loadbalancer.orca.LoadReport;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * WebFlux side of {@link LoadReporter}: writes the report on the answer of a request that
 * asks for one, and counts every request when it ends (an error that escapes the chain as
 * a 5xx, or its {@code ResponseStatusException}'s status). Thread-safe.
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
		return chain.filter(exchange)
			.doOnSuccess((done) -> this.reporter.served(status(exchange, 200)))
			.doOnError((error) -> this.reporter
				.served((error instanceof ResponseStatusException failed) ? failed.getStatusCode().value() : 500))
			// a client that went away: counted, not as an error of this instance
			.doOnCancel(() -> this.reporter.served(status(exchange, 0)));
	}

	private static int status(ServerWebExchange exchange, int otherwise) {
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		return (status != null) ? status.value() : otherwise;
	}

}
