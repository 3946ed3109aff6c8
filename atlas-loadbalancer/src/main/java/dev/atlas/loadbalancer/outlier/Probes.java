package dev.atlas.loadbalancer.outlier;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

import dev.atlas.loadbalancer.support.InstanceFailures;
import dev.atlas.loadbalancer.support.InstanceProbe;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The built-in {@link InstanceProbe}s: a TCP connect, and an HTTP GET of a path. Neither
 * sends anything of any request: the TCP probe opens and closes a connection, the HTTP
 * probe sends a GET of the configured path with no header of its own. Both run on the
 * calling thread and start none; both are thread-safe. Resolving a host name (when an
 * instance is registered by name) is the JVM's, outside the probe's timeout.
 *
 * @since 0.1.0
 */
public final class Probes {

	private static final Logger log = LoggerFactory.getLogger(Probes.class);

	private static final OncePerKeyLog TLS_FAILURES = new OncePerKeyLog();

	private Probes() {
	}

	/**
	 * The probe of a probe configuration.
	 * @param rules the type, timeout and path
	 * @return a TCP connect, an HTTP GET of the path, or (type {@code none}) a probe that
	 * always passes
	 */
	public static InstanceProbe of(ProbeRules rules) {
		return of(rules, null);
	}

	/**
	 * The probe of a probe configuration, with the TLS material its
	 * {@linkplain ProbeRules#sslBundle() SSL bundle} names.
	 * @param rules the type, timeout, path and server name
	 * @param sslContext the TLS context of HTTP probes of secure instances, or
	 * {@code null} for the JVM's default
	 * @return a TCP connect, an HTTP GET of the path, or (type {@code none}) a probe that
	 * always passes
	 */
	public static InstanceProbe of(ProbeRules rules, @Nullable SSLContext sslContext) {
		return switch (rules.type()) {
			case TCP -> tcp(rules.timeout());
			case HTTP -> http(rules.path(), rules.timeout(), sslContext,
					rules.serverName().isEmpty() ? null : rules.serverName());
			case NONE -> (instance) -> true;
		};
	}

	/**
	 * A TCP connect to the instance's host and port.
	 * @param timeout connect timeout, {@code > 0}
	 * @return passes when the connection is accepted within the timeout
	 */
	public static InstanceProbe tcp(Duration timeout) {
		int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		return (instance) -> {
			String host = instance.getHost();
			if (host == null || instance.getPort() <= 0) {
				return false;
			}
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress(host, instance.getPort()), millis);
				return true;
			}
			catch (IOException | RuntimeException ex) {
				return false;
			}
		};
	}

	/**
	 * An HTTP GET of a path on the instance (its scheme, host and port), on the calling
	 * (probe) thread with the JDK's {@link HttpURLConnection}: no thread of its own, no
	 * redirect followed, no cache, no header beyond the JDK's defaults. The path is
	 * requested on the port the instance is registered with: give a path the application
	 * serves there (with a separate {@code management.server.port}, its actuator health
	 * is not on that port).
	 * @param path the path, starting with {@code /}
	 * @param timeout connect timeout and read timeout (of the status line and headers),
	 * each, {@code > 0}
	 * @return passes on a 2xx status within the timeouts; the body is not read
	 */
	public static InstanceProbe http(String path, Duration timeout) {
		return http(path, timeout, null, null);
	}

	/**
	 * An HTTP GET of a path on the instance, as {@link #http(String, Duration)}, over TLS
	 * for a secure instance ({@link ServiceInstance#isSecure()}, or an {@code https}
	 * scheme) with the given TLS context and the certificate checked against a given host
	 * name. A failure to connect over TLS (an untrusted certificate, a certificate for
	 * another host) is logged once per instance and cause at WARN, naming the cause;
	 * other failures at DEBUG.
	 * @param path the path, starting with {@code /}
	 * @param timeout connect timeout and read timeout, each, {@code > 0}
	 * @param sslContext the TLS context (trust material, and a key for mutual TLS), or
	 * {@code null} for the JVM's default
	 * @param serverName the host name sent as SNI and checked against the certificate
	 * (the registered host is checked when the certificate does not match it), or
	 * {@code null} to check the registered host only (the JDK's host-name check)
	 * @return passes on a 2xx status within the timeouts; the body is not read
	 */
	public static InstanceProbe http(String path, Duration timeout, @Nullable SSLContext sslContext,
			@Nullable String serverName) {
		Objects.requireNonNull(path, "path");
		int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		SSLSocketFactory tls = (serverName != null)
				? new ServerNameSocketFactory(((sslContext != null) ? sslContext : defaultContext()).getSocketFactory(),
						serverName)
				: (sslContext != null) ? sslContext.getSocketFactory() : null;
		return (instance) -> {
			HttpURLConnection connection = null;
			String address = instance.getHost() + ':' + instance.getPort();
			try {
				URL url = URI
					.create((secure(instance) ? "https" : "http") + "://" + hostForUri(instance.getHost()) + ':'
							+ instance.getPort() + path)
					.toURL();
				connection = (HttpURLConnection) url.openConnection(Proxy.NO_PROXY);
				if (tls != null && connection instanceof HttpsURLConnection https) {
					https.setSSLSocketFactory(tls);
				}
				connection.setConnectTimeout(millis);
				connection.setReadTimeout(millis);
				connection.setInstanceFollowRedirects(false);
				connection.setUseCaches(false);
				connection.setRequestMethod("GET");
				// the status line is the answer: the body is not read (a slow body cannot
				// hold
				// the probe thread), and the connection is closed, not kept alive
				int status = connection.getResponseCode();
				if (status >= 200 && status < 300) {
					return true;
				}
				log.debug("HTTP probe of {} failed: it answered {} to GET {}", address, status, path);
				return false;
			}
			catch (SSLException ex) {
				String cause = describe(ex);
				TLS_FAILURES.once(address + ' ' + cause,
						(key) -> log.warn(
								"HTTPS probe of {} failed: {}. Check atlas.outlier.probe.ssl-bundle (trust material)"
										+ " and atlas.outlier.probe.server-name (the host the certificate names)",
								address, cause));
				return false;
			}
			catch (IOException | RuntimeException ex) {
				log.debug("HTTP probe of {} failed: {}", address, describe(ex));
				return false;
			}
			finally {
				if (connection != null) {
					connection.disconnect();
				}
			}
		};
	}

	private static boolean secure(ServiceInstance instance) {
		return instance.isSecure() || "https".equalsIgnoreCase(instance.getScheme());
	}

	/** The exception and its innermost cause, e.g. for a PKIX failure. */
	private static String describe(Throwable failure) {
		Throwable root = InstanceFailures.rootCause(failure);
		String text = failure.getClass().getSimpleName() + ": " + failure.getMessage();
		return (root == failure) ? text
				: text + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ')';
	}

	private static SSLContext defaultContext() {
		try {
			return SSLContext.getDefault();
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("The JVM has no default TLS context", ex);
		}
	}

	private static String hostForUri(String host) {
		return (host.indexOf(':') >= 0 && !host.startsWith("[")) ? '[' + host + ']' : host;
	}

	/**
	 * Sockets of a TLS context that send a host name as SNI and check the peer's
	 * certificate against it in the handshake (endpoint identification {@code HTTPS}):
	 * the JDK checks the certificate against the SNI name, else against the host
	 * connected to.
	 */
	private static final class ServerNameSocketFactory extends SSLSocketFactory {

		private final SSLSocketFactory delegate;

		private final List<SNIServerName> serverNames;

		ServerNameSocketFactory(SSLSocketFactory delegate, String serverName) {
			this.delegate = delegate;
			this.serverNames = List.of(new SNIHostName(serverName));
		}

		private Socket named(Socket socket) {
			if (socket instanceof SSLSocket tls) {
				SSLParameters parameters = tls.getSSLParameters();
				parameters.setServerNames(this.serverNames);
				parameters.setEndpointIdentificationAlgorithm("HTTPS");
				tls.setSSLParameters(parameters);
			}
			return socket;
		}

		@Override
		public String[] getDefaultCipherSuites() {
			return this.delegate.getDefaultCipherSuites();
		}

		@Override
		public String[] getSupportedCipherSuites() {
			return this.delegate.getSupportedCipherSuites();
		}

		@Override
		public Socket createSocket() throws IOException {
			return named(this.delegate.createSocket());
		}

		@Override
		public Socket createSocket(Socket socket, String host, int port, boolean autoClose) throws IOException {
			return named(this.delegate.createSocket(socket, host, port, autoClose));
		}

		@Override
		public Socket createSocket(String host, int port) throws IOException {
			return named(this.delegate.createSocket(host, port));
		}

		@Override
		public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
			return named(this.delegate.createSocket(host, port, localHost, localPort));
		}

		@Override
		public Socket createSocket(InetAddress host, int port) throws IOException {
			return named(this.delegate.createSocket(host, port));
		}

		@Override
		public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
				throws IOException {
			return named(this.delegate.createSocket(address, port, localAddress, localPort));
		}

	}

}
