package dev.atlas.loadbalancer.outlier;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.client.ResourceAccessException;

import static org.assertj.core.api.Assertions.assertThat;

/** How a completed request becomes an outlier detection outcome. */
class OutlierLifecycleTest {

	private static ResponseData answer(int status) {
		return new ResponseData(HttpStatusCode.valueOf(status), new HttpHeaders(), null, (RequestData) null);
	}

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource({ "200, SUCCESS", "404, SUCCESS", "429, SUCCESS", "500, SERVER_ERROR", "501, SERVER_ERROR",
			"502, GATEWAY_FAILURE", "503, OVERLOADED", "504, GATEWAY_FAILURE", "599, SERVER_ERROR" })
	void answersByStatusCode(int status, Outcome outcome) {
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.SUCCESS, null, answer(status))).isEqualTo(outcome);
		assertThat(outcome.isGatewayFailure()).as("502, 503, 504 are gateway failures (Envoy)")
			.isEqualTo(status >= 502 && status <= 504);
	}

	@Test
	void connectionAndTimeoutFailuresAreGatewayFailuresWhereverTheyAreWrapped() {
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.FAILED,
				new ResourceAccessException("I/O error", new ConnectException("Connection refused")), null))
			.as("a gateway failure that proves the instance gone")
			.isEqualTo(Outcome.UNREACHABLE)
			.matches(Outcome::isGatewayFailure);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.FAILED,
				new RuntimeException(new SocketTimeoutException("Read timed out")), null))
			.isEqualTo(Outcome.GATEWAY_FAILURE);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.FAILED, new TimeoutException(), null))
			.isEqualTo(Outcome.GATEWAY_FAILURE);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.FAILED, new ReadTimeoutException(), null))
			.as("another library's timeout, by class name (e.g. Netty's)")
			.isEqualTo(Outcome.GATEWAY_FAILURE);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.FAILED, new IOException("reset"), null))
			.isEqualTo(Outcome.GATEWAY_FAILURE);
	}

	@Test
	void theCallersOwnFailuresAndRequestsWithoutInstanceTellNothing() {
		assertThat(
				OutlierLifecycle.outcome(CompletionContext.Status.FAILED, new IllegalStateException("own bug"), null))
			.isEqualTo(Outcome.IGNORED);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.DISCARD, null, null)).isEqualTo(Outcome.IGNORED);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.SUCCESS, null, null))
			.as("no answer object: a success")
			.isEqualTo(Outcome.SUCCESS);
	}

	@Test
	void interruptionsCancellationsAndTheCallersOwnPoolAreNotTheInstancesFault() {
		// spring-web's JdkClientHttpRequest
		assertThat(outcomeOf(new IOException("Request was interrupted", new InterruptedException())))
			.isEqualTo(Outcome.IGNORED);
		assertThat(outcomeOf(new IOException("Request cancelled", new CancellationException())))
			.isEqualTo(Outcome.IGNORED);
		assertThat(outcomeOf(new ResourceAccessException("I/O error", new InterruptedIOException("aborted"))))
			.isEqualTo(Outcome.IGNORED);
		assertThat(outcomeOf(new ClosedByInterruptException())).isEqualTo(Outcome.IGNORED);
		// Apache HttpClient 5's pool lease timeout, Reactor Netty's pool acquire timeout
		assertThat(outcomeOf(new ConnectionRequestTimeoutException())).isEqualTo(Outcome.IGNORED);
		assertThat(outcomeOf(new RuntimeException(new PoolAcquireTimeoutException()))).isEqualTo(Outcome.IGNORED);
		// Apache HttpClient 5's connect timeout is an InterruptedIOException too, but the
		// instance's fault
		assertThat(outcomeOf(new ConnectTimeoutException())).isEqualTo(Outcome.UNREACHABLE)
			.matches(Outcome::isGatewayFailure);
		assertThat(outcomeOf(new SocketTimeoutException("Read timed out"))).isEqualTo(Outcome.GATEWAY_FAILURE);
	}

	private static Outcome outcomeOf(Throwable failure) {
		return OutlierLifecycle.outcome(CompletionContext.Status.FAILED, failure, null);
	}

	/** Stands for Apache HttpClient 5's (an {@code InterruptedIOException}). */
	static final class ConnectionRequestTimeoutException extends InterruptedIOException {

	}

	/** Stands for Apache HttpClient 5's (an {@code InterruptedIOException}). */
	static final class ConnectTimeoutException extends InterruptedIOException {

	}

	/** Stands for Reactor Netty's (a {@code TimeoutException}). */
	static final class PoolAcquireTimeoutException extends TimeoutException {

	}

	/** Stands for a timeout exception of another library, e.g. Netty's. */
	static final class ReadTimeoutException extends RuntimeException {

	}

}
