package dev.atlas.autoconfigure.overload;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.atlas.loadbalancer.overload.OverloadMarks;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Binds the {@linkplain OverloadMarks overload marker} of each inbound request of a
 * WebFlux application to the Reactor context of its handling
 * ({@link OverloadMarks#CONTEXT_KEY}): when a load-balanced WebClient call made within
 * that handling gives up for overload (a retry the budget refused, every instance at the
 * per-instance in-flight limit, a last retry answered with a retryable status again), the
 * answer gets {@value OverloadMarks#HEADER}{@code : true} when it is committed, if it is
 * not committed yet, and an Atlas caller one hop up does not retry it. Nothing is
 * registered on the answer unless a call gives up. Ordered first. Thread-safe.
 *
 * @since 0.1.0
 */
public class ReactiveOverloadMarkerFilter implements WebFilter, Ordered {

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		Mark mark = new Mark(exchange.getResponse());
		return chain.filter(exchange).contextWrite((context) -> context.put(OverloadMarks.CONTEXT_KEY, mark));
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/**
	 * Sets the header when the answer is committed, the first time it runs, from any
	 * thread (Spring's {@code AbstractServerHttpResponse} keeps its commit actions in a
	 * copy-on-write list). A mark that runs while the answer is being committed can come
	 * too late and is then dropped: the marker fails open, and the caller above may retry
	 * as it would without Atlas.
	 */
	private static final class Mark extends AtomicBoolean implements Runnable {

		private final ServerHttpResponse response;

		Mark(ServerHttpResponse response) {
			this.response = response;
		}

		@Override
		public void run() {
			if (!this.response.isCommitted() && compareAndSet(false, true)) {
				this.response.beforeCommit(() -> {
					this.response.getHeaders().set(OverloadMarks.HEADER, "true");
					return Mono.empty();
				});
			}
		}

	}

}
