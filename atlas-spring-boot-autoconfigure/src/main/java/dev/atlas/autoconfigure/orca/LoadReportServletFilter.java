package dev.atlas.autoconfigure.orca;

import java.io.IOException;

import dev.atlas.loadbalancer.orca.LoadReport;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Servlet side of {@link LoadReporter}: writes the report on the answer of a request that
 * asks for one (before the application writes anything), and counts every request when it
 * ends.
 *
 * @since 0.1.0
 */
public class LoadReportServletFilter extends OncePerRequestFilter {

	private final LoadReporter reporter;

	/**
	 * Creates the filter.
	 * @param reporter counts and reports
	 */
	public LoadReportServletFilter(LoadReporter reporter) {
		this.reporter = reporter;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String header = this.reporter.header(request.getHeader(LoadReport.FORMAT_HEADER));
		if (header != null) {
			response.setHeader(LoadReport.HEADER, header);
		}
		boolean async = false;
		try {
			chain.doFilter(request, response);
			if (request.isAsyncStarted()) {
				// counted when the asynchronous request completes, with its final status
				request.getAsyncContext().addListener(new Counting(this.reporter, response));
				async = true;
			}
		}
		catch (IOException | ServletException | RuntimeException ex) {
			this.reporter.served(500);
			throw ex;
		}
		if (!async) {
			this.reporter.served(response.getStatus());
		}
	}

	/** Counts an asynchronous request when it ends. */
	private record Counting(LoadReporter reporter, HttpServletResponse response) implements AsyncListener {

		@Override
		public void onComplete(AsyncEvent event) {
			this.reporter.served(this.response.getStatus());
		}

		@Override
		public void onTimeout(AsyncEvent event) {
		}

		@Override
		public void onError(AsyncEvent event) {
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this);
		}

	}

}
