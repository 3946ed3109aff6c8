package dev.atlas.autoconfigure.overload;

import java.io.IOException;

import dev.atlas.loadbalancer.overload.OverloadMarks;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Binds the {@linkplain OverloadMarks overload marker} of each inbound request to the
 * thread that handles it: when one of the application's load-balanced calls gives up for
 * overload (a retry the budget refused, every instance at the per-instance in-flight
 * limit, a last retry answered with a retryable status again), the answer gets
 * {@value OverloadMarks#HEADER}{@code : true} if it is not committed yet, and an Atlas
 * caller one hop up does not retry it. Thread-safe.
 *
 * @since 0.1.0
 */
public class OverloadMarkerFilter extends OncePerRequestFilter {

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		Runnable previous = OverloadMarks.current();
		OverloadMarks.bind(() -> {
			if (!response.isCommitted()) {
				response.setHeader(OverloadMarks.HEADER, "true");
			}
		});
		try {
			chain.doFilter(request, response);
		}
		finally {
			if (previous != null) {
				OverloadMarks.bind(previous);
			}
			else {
				OverloadMarks.unbind();
			}
		}
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

}
