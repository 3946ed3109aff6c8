package dev.atlas.autoconfigure.propagation;

import java.io.IOException;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.spi.RoutingAttributes;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Captures the propagated headers of each inbound servlet request into the
 * {@link RoutingContextHolder} for the duration of the request, and restores the thread's
 * previous context afterwards, so nothing leaks into the next request served by the same
 * thread.
 *
 * @since 0.1.0
 */
public class RoutingContextServletFilter extends OncePerRequestFilter {

	private final PropagatedHeaders headers;

	private final @Nullable LaneTagger lanes;

	/**
	 * Creates the filter.
	 * @param headers what to capture
	 */
	public RoutingContextServletFilter(PropagatedHeaders headers) {
		this(headers, null);
	}

	/**
	 * Creates the filter that also applies the lane rules: the tag of the first rule an
	 * inbound request matches is put in its routing context as the gray header.
	 * @param headers what to capture
	 * @param lanes the lane rules in force, or {@code null} for none
	 */
	public RoutingContextServletFilter(PropagatedHeaders headers, @Nullable LaneTagger lanes) {
		this.headers = headers;
		this.lanes = lanes;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		RoutingContext previous = RoutingContextHolder.get();
		RoutingContext context = this.headers.capture(request::getHeader);
		if (this.lanes != null && this.lanes.hasRules()) {
			context = this.lanes.tag(context, new ServletAttributes(request));
		}
		if (previous == null && context.isEmpty()) {
			// Nothing to carry and nothing to restore (most requests): the thread's
			// holder is not written, only cleared if something set it meanwhile.
			try {
				chain.doFilter(request, response);
			}
			finally {
				if (RoutingContextHolder.get() != null) {
					RoutingContextHolder.clear();
				}
			}
			return;
		}
		RoutingContextHolder.set(context);
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

	/** What lane rules read of a servlet request. */
	private static final class ServletAttributes implements RoutingAttributes {

		private final HttpServletRequest request;

		ServletAttributes(HttpServletRequest request) {
			this.request = request;
		}

		@Override
		public @Nullable String header(String lowerCaseName) {
			return RequestHeaders.trimmed(this.request.getHeader(lowerCaseName));
		}

		@Override
		public @Nullable String cookie(String name) {
			Cookie[] cookies = this.request.getCookies();
			if (cookies != null) {
				for (Cookie cookie : cookies) {
					if (name.equals(cookie.getName())) {
						return cookie.getValue();
					}
				}
			}
			return null;
		}

		@Override
		public @Nullable String queryParameter(String name) {
			// The query string only: getParameter would read a form body.
			return RequestHeaders.queryParameter(this.request.getQueryString(), name);
		}

	}

}
