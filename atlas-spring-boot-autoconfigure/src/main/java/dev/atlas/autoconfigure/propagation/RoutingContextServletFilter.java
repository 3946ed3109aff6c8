package dev.atlas.autoconfigure.propagation;

import java.io.IOException;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Captures the propagated headers of each inbound servlet request into the
 * {@link RoutingContextHolder} for the duration of the request, and restores the thread's
 * previous context afterwards, so nothing leaks into the next request served by the same
 * thread.
 */
public class RoutingContextServletFilter extends OncePerRequestFilter {

	private final PropagatedHeaders headers;

	/**
	 * Creates the filter.
	 * @param headers what to capture
	 */
	public RoutingContextServletFilter(PropagatedHeaders headers) {
		this.headers = headers;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		RoutingContext previous = RoutingContextHolder.get();
		RoutingContextHolder.set(this.headers.capture(request::getHeader));
		try {
			chain.doFilter(request, response);
		}
		finally {
			RoutingContextHolder.set(previous);
		}
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

}
