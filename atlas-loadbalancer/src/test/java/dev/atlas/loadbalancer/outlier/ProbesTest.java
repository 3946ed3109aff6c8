package dev.atlas.loadbalancer.outlier;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/** The built-in probes against real sockets on loopback. */
class ProbesTest {

	private final List<AutoCloseable> open = new ArrayList<>();

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.open) {
			closeable.close();
		}
	}

	private static ServiceInstance at(int port) {
		return new DefaultServiceInstance("i", "user-service", "127.0.0.1", port, false, Map.of());
	}

	private static int closedPort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	@Test
	void tcpPassesWhenTheInstanceAcceptsAConnectionAndFailsWhenRefused() throws Exception {
		ServerSocket listening = new ServerSocket(0);
		this.open.add(listening);
		assertThat(Probes.tcp(Duration.ofSeconds(1)).probe(at(listening.getLocalPort()))).isTrue();
		assertThat(Probes.tcp(Duration.ofSeconds(1)).probe(at(closedPort()))).isFalse();
	}

	@Test
	void httpPassesOnA2xxOfThePathOnlyAndSendsNoRequestHeaderOfItsOwn() throws Exception {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		List<String> paths = new ArrayList<>();
		List<String> headerNames = new ArrayList<>();
		server.createContext("/", (exchange) -> {
			paths.add(exchange.getRequestURI().getPath());
			headerNames.addAll(exchange.getRequestHeaders().keySet());
			int status = switch (exchange.getRequestURI().getPath()) {
				case "/health" -> 200;
				case "/moved" -> 302;
				case "/down" -> 503;
				default -> 404;
			};
			exchange.sendResponseHeaders(status, -1);
			exchange.close();
		});
		server.start();
		this.open.add(() -> server.stop(0));
		ServiceInstance instance = at(server.getAddress().getPort());
		assertThat(Probes.http("/health", Duration.ofSeconds(1)).probe(instance)).isTrue();
		assertThat(Probes.http("/down", Duration.ofSeconds(1)).probe(instance)).isFalse();
		assertThat(Probes.http("/moved", Duration.ofSeconds(1)).probe(instance)).as("redirects not followed").isFalse();
		assertThat(Probes.http("/nowhere", Duration.ofSeconds(1)).probe(instance)).isFalse();
		assertThat(Probes.http("/health", Duration.ofSeconds(1)).probe(at(closedPort()))).isFalse();
		assertThat(paths).containsExactly("/health", "/down", "/moved", "/nowhere");
		assertThat(headerNames).map(String::toLowerCase).doesNotContain("x-service-version", "cookie", "authorization");
	}

	@Test
	void httpTimesOutOnAnInstanceThatAcceptsButNeverAnswers() throws Exception {
		ServerSocket silent = new ServerSocket(0);
		this.open.add(silent);
		long start = System.nanoTime();
		assertThat(Probes.http("/health", Duration.ofMillis(300)).probe(at(silent.getLocalPort()))).isFalse();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		assertThat(Probes.tcp(Duration.ofMillis(300)).probe(at(silent.getLocalPort())))
			.as("a TCP probe cannot tell a hung instance")
			.isTrue();
	}

	@Test
	void noneAlwaysPasses() throws Exception {
		assertThat(Probes.of(new ProbeRules(ProbeType.NONE, Duration.ofSeconds(5), Duration.ofSeconds(1), "/x"))
			.probe(at(closedPort()))).isTrue();
	}

}
