package dev.atlas.sample.user;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Remembers, in memory, how many {@code /users/**} requests this instance has served and
 * when it finished the last one. A rolling-restart test reads it from each stopped
 * instance to measure how long traffic kept arriving after the instance deregistered.
 */
@Component
public class ServedRequests extends OncePerRequestFilter {

	private final AtomicLong served = new AtomicLong();

	private final AtomicLong lastServedAt = new AtomicLong(-1);

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !request.getRequestURI().startsWith("/users");
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		try {
			chain.doFilter(request, response);
		}
		finally {
			this.served.incrementAndGet();
			this.lastServedAt.accumulateAndGet(System.currentTimeMillis(), Math::max);
		}
	}

	/**
	 * @return the number of {@code /users/**} requests served so far
	 */
	public long served() {
		return this.served.get();
	}

	/**
	 * @return when the last {@code /users/**} request finished (epoch ms), or {@code -1}
	 * if none
	 */
	public long lastServedAt() {
		return this.lastServedAt.get();
	}

}
