package dev.atlas.loadbalancer.support;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ConnectFailuresTest {

	@Test
	void connectFailuresNeverReachedTheServer() {
		assertThat(ConnectFailures.neverSent(new ConnectException("Connection refused"))).isTrue();
		assertThat(ConnectFailures.neverSent(new NoRouteToHostException())).isTrue();
		assertThat(ConnectFailures.neverSent(new UnknownHostException("nowhere"))).isTrue();
		assertThat(ConnectFailures.neverSent(new SocketTimeoutException("Connect timed out"))).isTrue();
		assertThat(ConnectFailures.neverSent(new HttpConnectTimeoutException("HTTP connect timed out"))).isTrue();
		assertThat(ConnectFailures.neverSent(new ConnectTimeoutException())).isTrue();
	}

	@Test
	void wrappedConnectFailuresAreFoundThroughTheirCauses() {
		IOException wrapped = new IOException("I/O error on GET",
				new RuntimeException(new ConnectException("Connection refused")));
		assertThat(ConnectFailures.neverSent(new IllegalStateException(wrapped))).isTrue();
	}

	@Test
	void failuresThatMayHaveReachedTheServerAreNot() {
		assertThat(ConnectFailures.neverSent(null)).isFalse();
		assertThat(ConnectFailures.neverSent(new SocketTimeoutException("Read timed out"))).isFalse();
		assertThat(ConnectFailures.neverSent(new SocketTimeoutException())).isFalse();
		assertThat(ConnectFailures.neverSent(new SocketException("Connection reset"))).isFalse();
		assertThat(ConnectFailures.neverSent(new HttpTimeoutException("request timed out"))).isFalse();
		assertThat(ConnectFailures.neverSent(new TimeoutException())).isFalse();
		assertThat(ConnectFailures.neverSent(new IOException("closed", new IOException("premature")))).isFalse();
	}

	@Test
	void aCycleOfCausesEnds() {
		IOException first = new IOException("first");
		IOException second = new IOException("second", first);
		first.initCause(second);
		assertThat(ConnectFailures.neverSent(first)).isFalse();
	}

	/** Named as Apache HttpClient 5's connect timeout, which is no ConnectException. */
	static final class ConnectTimeoutException extends InterruptedIOException {

	}

}
