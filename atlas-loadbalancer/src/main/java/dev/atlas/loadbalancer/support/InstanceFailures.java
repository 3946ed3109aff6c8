package dev.atlas.loadbalancer.support;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.http.HttpStatusCode;

/**
 * Which exceptions a request ends with say that the instance failed (as opposed to the
 * caller itself), for outlier detection and the live statistics. Stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
public final class InstanceFailures {

	/** Failures of the caller's own connection pool, by simple class name. */
	private static final Set<String> CALLERS_OWN = Set.of("PoolAcquireTimeoutException",
			"PoolAcquirePendingLimitException", "ConnectionRequestTimeoutException", "RequestFailedException");

	/**
	 * Connect timeouts that extend {@link InterruptedIOException}, by simple class name.
	 */
	private static final Set<String> CONNECT_TIMEOUTS = Set.of("ConnectTimeoutException");

	private InstanceFailures() {
	}

	/**
	 * Whether a failure without an answer says the instance is unreachable or stuck: an
	 * {@link IOException} (connection refused, reset or timed out, read timeout, closed
	 * prematurely) or a {@link TimeoutException} among its causes, or a timeout exception
	 * of another library (by class name, e.g. Netty's); not the caller's own failures
	 * (interrupted, cancelled, its connection pool exhausted), which say nothing of the
	 * instance.
	 * @param failure the exception a request ended with
	 * @return {@code true} when the instance is to blame
	 */
	public static boolean isInstanceFailure(Throwable failure) {
		boolean gateway = false;
		Throwable current = failure;
		for (int depth = 0; current != null && depth < 16; depth++) {
			String name = current.getClass().getSimpleName();
			if (current instanceof InterruptedException || current instanceof CancellationException
					|| current instanceof ClosedByInterruptException || CALLERS_OWN.contains(name)
					|| (current instanceof InterruptedIOException && !(current instanceof SocketTimeoutException)
							&& !CONNECT_TIMEOUTS.contains(name))) {
				return false;
			}
			gateway |= current instanceof IOException || current instanceof TimeoutException
					|| name.endsWith("TimeoutException");
			current = (current.getCause() != current) ? current.getCause() : null;
		}
		return gateway;
	}

	/**
	 * The innermost cause of a failure, following at most 16 causes (a cyclic chain ends
	 * there).
	 * @param failure an exception
	 * @return its innermost cause, or {@code failure} when it has none
	 */
	public static Throwable rootCause(Throwable failure) {
		Throwable root = failure;
		for (int depth = 0; root.getCause() != null && root.getCause() != root && depth < 16; depth++) {
			root = root.getCause();
		}
		return root;
	}

	/**
	 * The HTTP status of the answer a request ended with, as Spring Cloud's request
	 * lifecycle reports it ({@link ResponseData}, for every client and the gateway).
	 * @param clientResponse the completion's client response, may be {@code null}
	 * @return the status code, or {@code -1} when there is none
	 */
	public static int statusCode(@Nullable Object clientResponse) {
		if (clientResponse instanceof ResponseData data) {
			HttpStatusCode code = data.getHttpStatus();
			return (code != null) ? code.value() : -1;
		}
		return -1;
	}

}
