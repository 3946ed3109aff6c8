package dev.atlas.autoconfigure.loadbalancer;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeoutException;

import dev.atlas.loadbalancer.outlier.Outcome;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

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
			"502, GATEWAY_FAILURE", "503, GATEWAY_FAILURE", "504, GATEWAY_FAILURE", "599, SERVER_ERROR" })
	void answersByStatusCode(int status, Outcome outcome) {
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.SUCCESS, null, answer(status))).isEqualTo(outcome);
	}

	@Test
	void connectionAndTimeoutFailuresAreGatewayFailuresWhereverTheyAreWrapped() {
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.FAILED,
				new ResourceAccessException("I/O error", new ConnectException("Connection refused")), null))
			.isEqualTo(Outcome.GATEWAY_FAILURE);
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
	void theCallersOwnFailuresAndCancellationsTellNothing() {
		assertThat(
				OutlierLifecycle.outcome(CompletionContext.Status.FAILED, new IllegalStateException("own bug"), null))
			.isEqualTo(Outcome.IGNORED);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.DISCARD, null, null)).isEqualTo(Outcome.IGNORED);
		assertThat(OutlierLifecycle.outcome(CompletionContext.Status.SUCCESS, null, null))
			.as("no answer object: a success")
			.isEqualTo(Outcome.SUCCESS);
	}

	/** Stands for a timeout exception of another library, e.g. Netty's. */
	static final class ReadTimeoutException extends RuntimeException {

	}

}
