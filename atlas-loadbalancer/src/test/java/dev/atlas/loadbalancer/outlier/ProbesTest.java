package dev.atlas.loadbalancer.outlier;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

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

	/**
	 * A secure instance registered by IP address (127.0.0.1) whose certificate is
	 * self-signed for {@code user-service.internal} only: the probe needs the trust
	 * material (an SSL bundle's context) and the host name the certificate names.
	 */
	@Test
	void httpsProbesTrustTheGivenContextAndCheckTheGivenServerName() throws Exception {
		char[] password = "changeit".toCharArray();
		KeyStore serverKeys = KeyStore.getInstance("PKCS12");
		try (InputStream in = getClass().getResourceAsStream("/tls/server.p12")) {
			serverKeys.load(in, password);
		}
		KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
		keys.init(serverKeys, password);
		SSLContext serverContext = SSLContext.getInstance("TLS");
		serverContext.init(keys.getKeyManagers(), null, null);
		HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		server.setHttpsConfigurator(new HttpsConfigurator(serverContext));
		server.createContext("/health", (exchange) -> {
			exchange.sendResponseHeaders(200, -1);
			exchange.close();
		});
		server.start();
		this.open.add(() -> server.stop(0));

		KeyStore trusted = KeyStore.getInstance("PKCS12");
		trusted.load(null, null);
		try (InputStream in = getClass().getResourceAsStream("/tls/server-cert.pem")) {
			trusted.setCertificateEntry("probe", CertificateFactory.getInstance("X.509").generateCertificate(in));
		}
		TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		trust.init(trusted);
		SSLContext bundle = SSLContext.getInstance("TLS");
		bundle.init(null, trust.getTrustManagers(), null);

		ServiceInstance secure = new DefaultServiceInstance("i", "user-service", "127.0.0.1",
				server.getAddress().getPort(), true, Map.of());
		ServiceInstance httpsScheme = new DefaultServiceInstance("i", "user-service", "127.0.0.1",
				server.getAddress().getPort(), false, Map.of()) {
			@Override
			public String getScheme() {
				return "https";
			}
		};
		Duration timeout = Duration.ofSeconds(2);
		assertThat(Probes.http("/health", timeout).probe(secure)).as("the JVM's trust store: untrusted").isFalse();
		assertThat(Probes.http("/health", timeout, bundle, null).probe(secure))
			.as("trusted, checked against 127.0.0.1: no IP entry")
			.isFalse();
		assertThat(Probes.http("/health", timeout, bundle, "other.internal").probe(secure))
			.as("trusted, checked against another name")
			.isFalse();
		assertThat(Probes.http("/health", timeout, bundle, "user-service.internal").probe(secure)).isTrue();
		assertThat(Probes.http("/health", timeout, bundle, "user-service.internal").probe(httpsScheme))
			.as("an https scheme is secure too")
			.isTrue();
		ProbeRules rules = new ProbeRules(ProbeType.HTTP, Duration.ofSeconds(5), timeout, "/health", "probe-bundle",
				"user-service.internal");
		assertThat(Probes.of(rules, bundle).probe(secure)).as("from the rules").isTrue();
	}

	@Test
	void aServerNameMustBeAHostName() {
		for (String bad : new String[] { "10.0.0.1", "user service", "-x.internal", "a..b" }) {
			assertThatIllegalArgumentException().isThrownBy(
					() -> new ProbeRules(ProbeType.HTTP, Duration.ofSeconds(5), Duration.ofSeconds(1), "/h", "", bad))
				.withMessageContaining("probe.server-name must be a DNS host name");
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
