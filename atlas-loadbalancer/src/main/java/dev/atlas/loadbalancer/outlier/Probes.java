package dev.atlas.loadbalancer.outlier;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.time.Duration;
import java.util.Objects;

import dev.atlas.loadbalancer.support.InstanceProbe;

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

	private Probes() {
	}

	/**
	 * The probe of a probe configuration.
	 * @param rules the type, timeout and path
	 * @return a TCP connect, an HTTP GET of the path, or (type {@code none}) a probe that
	 * always passes
	 */
	public static InstanceProbe of(ProbeRules rules) {
		return switch (rules.type()) {
			case TCP -> tcp(rules.timeout());
			case HTTP -> http(rules.path(), rules.timeout());
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
		Objects.requireNonNull(path, "path");
		int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		return (instance) -> {
			HttpURLConnection connection = null;
			try {
				URL url = URI
					.create((instance.isSecure() ? "https" : "http") + "://" + hostForUri(instance.getHost()) + ':'
							+ instance.getPort() + path)
					.toURL();
				connection = (HttpURLConnection) url.openConnection(Proxy.NO_PROXY);
				connection.setConnectTimeout(millis);
				connection.setReadTimeout(millis);
				connection.setInstanceFollowRedirects(false);
				connection.setUseCaches(false);
				connection.setRequestMethod("GET");
				// the status line is the answer: the body is not read (a slow body cannot
				// hold
				// the probe thread), and the connection is closed, not kept alive
				int status = connection.getResponseCode();
				return status >= 200 && status < 300;
			}
			catch (IOException | RuntimeException ex) {
				return false;
			}
			finally {
				if (connection != null) {
					connection.disconnect();
				}
			}
		};
	}

	private static String hostForUri(String host) {
		return (host.indexOf(':') >= 0 && !host.startsWith("[")) ? '[' + host + ']' : host;
	}

}
