package dev.atlas.loadbalancer.support;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Tells a failure that never reached the server (nothing of the request was sent: the
 * connection was refused, timed out, had no route, or the host name did not resolve) from
 * one that may have (a reset, a read timeout, an answer), by the exception and its
 * causes. What never reached the server may be requeued on another instance whatever the
 * method, POST included (Finagle's requeue); the rest is retried only when the method is
 * idempotent.
 *
 * <p>
 * What each client's transport throws for a connect failure, wrapped by the client
 * ({@code ResourceAccessException}, {@code WebClientRequestException},
 * {@code feign.RetryableException}):
 * <ul>
 * <li>refused: {@link ConnectException} (JDK {@code HttpURLConnection} and
 * {@code HttpClient}, Apache HttpClient 5's {@code HttpHostConnectException}, Reactor
 * Netty's {@code AnnotatedConnectException}, Jetty);</li>
 * <li>connect timeout: Netty's {@code ConnectTimeoutException} (a
 * {@code ConnectException}), Apache HttpClient 5's {@code ConnectTimeoutException}, the
 * JDK {@code HttpClient}'s {@code HttpConnectTimeoutException}, and
 * {@code HttpURLConnection}'s {@link SocketTimeoutException} with the message
 * {@code Connect timed out} (its read timeout says {@code Read timed out});</li>
 * <li>no route: {@link NoRouteToHostException}; unresolvable host:
 * {@link UnknownHostException}.</li>
 * </ul>
 * A timeout that a client library reports without saying which phase it was in is treated
 * as possibly sent. Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class ConnectFailures {

	/** How deep the chain of causes is searched. */
	private static final int MAX_DEPTH = 8;

	private ConnectFailures() {
	}

	/**
	 * Whether a failure proves that nothing of the request reached the server.
	 * @param failure the failure, or {@code null}
	 * @return {@code true} when it, or one of its first {@value #MAX_DEPTH} causes, is a
	 * connect failure; {@code false} for {@code null}
	 */
	public static boolean neverSent(@Nullable Throwable failure) {
		Throwable current = failure;
		for (int depth = 0; current != null && depth < MAX_DEPTH; depth++) {
			if (isConnectFailure(current)) {
				return true;
			}
			Throwable cause = current.getCause();
			current = (cause == current) ? null : cause;
		}
		return false;
	}

	private static boolean isConnectFailure(Throwable failure) {
		if (failure instanceof ConnectException || failure instanceof NoRouteToHostException
				|| failure instanceof UnknownHostException) {
			return true;
		}
		if (failure instanceof SocketTimeoutException) {
			String message = failure.getMessage();
			return message != null && message.toLowerCase(Locale.ROOT).startsWith("connect timed out");
		}
		String name = failure.getClass().getSimpleName();
		// Apache HttpClient 5's (an InterruptedIOException) and the JDK HttpClient's (an
		// HttpTimeoutException): matched by name, so that neither is needed to load this
		return name.equals("ConnectTimeoutException") || name.equals("HttpConnectTimeoutException");
	}

}
