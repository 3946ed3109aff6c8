package dev.atlas.loadbalancer.outlier;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;

import dev.atlas.loadbalancer.support.InstanceProbe;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The built-in {@link InstanceProbe}s: a TCP connect, and an HTTP GET of a path. Neither
 * sends anything of any request: the TCP probe opens and closes a connection, the HTTP
 * probe sends a GET of the configured path with no header of its own. Both are
 * thread-safe.
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
	 * An HTTP GET of a path on the instance (its scheme, host and port), through the
	 * JDK's {@link HttpClient}; redirects are not followed.
	 * @param path the path, starting with {@code /}
	 * @param timeout connect timeout and answer timeout, each, {@code > 0}
	 * @return passes on a 2xx answer within the timeout
	 */
	public static InstanceProbe http(String path, Duration timeout) {
		Objects.requireNonNull(path, "path");
		HttpClient client = HttpClient.newBuilder()
			.connectTimeout(timeout)
			.followRedirects(HttpClient.Redirect.NEVER)
			.version(HttpClient.Version.HTTP_1_1)
			.build();
		return (instance) -> {
			try {
				URI uri = URI.create((instance.isSecure() ? "https" : "http") + "://" + hostForUri(instance.getHost())
						+ ':' + instance.getPort() + path);
				HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
				int status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
				return status >= 200 && status < 300;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			catch (IOException | RuntimeException ex) {
				return false;
			}
		};
	}

	private static String hostForUri(String host) {
		return (host.indexOf(':') >= 0 && !host.startsWith("[")) ? '[' + host + ']' : host;
	}

}
