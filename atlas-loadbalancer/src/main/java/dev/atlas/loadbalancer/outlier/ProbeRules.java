package dev.atlas.loadbalancer.outlier;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Objects;

/**
 * How an ejected instance is probed before it returns, and how a stale instance list is
 * checked.
 *
 * @param type what a probe does
 * @param interval time between two probes of one instance, {@code > 0}; each is moved by
 * up to 10 % at random (jitter) so that callers do not probe in step
 * @param timeout how long one probe may take (connect, and for HTTP the answer),
 * {@code > 0}
 * @param path the path an {@link ProbeType#HTTP HTTP} probe requests, starting with
 * {@code /}; ignored for other types
 * @param sslBundle the name of the Spring SSL bundle whose trust material (and key, for
 * mutual TLS) an HTTP probe of a secure instance uses, {@code ""} for the JVM's default
 * trust store; resolved by the caller of
 * {@link Probes#of(ProbeRules, javax.net.ssl.SSLContext)}
 * @param serverName the host name an HTTP probe of a secure instance sends as SNI and
 * checks the instance's certificate against, for instances registered by IP address whose
 * certificates name a host (e.g. {@code user-service.internal}); {@code ""} to check
 * against the registered host (an IP address then needs an IP entry in the certificate)
 * @since 0.1.0
 */
public record ProbeRules(ProbeType type, Duration interval, Duration timeout, String path, String sslBundle,
		String serverName) {

	/** A TCP connect every 5 s, 1 s timeout. */
	public static final ProbeRules DEFAULTS = new ProbeRules(ProbeType.TCP, Duration.ofSeconds(5),
			Duration.ofSeconds(1), "/actuator/health");

	/**
	 * Rules without TLS settings of their own (the JVM's trust store, the registered host
	 * checked).
	 * @param type what a probe does
	 * @param interval time between two probes of one instance, {@code > 0}
	 * @param timeout how long one probe may take, {@code > 0}
	 * @param path the path an HTTP probe requests
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public ProbeRules(ProbeType type, Duration interval, Duration timeout, String path) {
		this(type, interval, timeout, path, "", "");
	}

	/**
	 * Validates.
	 * @throws IllegalArgumentException naming the property (relative to the section) when
	 * a value is out of range
	 */
	public ProbeRules {
		Objects.requireNonNull(type, "probe.type must be set: tcp, http or none");
		Objects.requireNonNull(interval, "probe.interval must be set: a duration of at least 1ms");
		Objects.requireNonNull(timeout, "probe.timeout must be set: a duration of at least 1ms");
		Objects.requireNonNull(path, "probe.path must be set: a path starting with '/'");
		if (interval.toMillis() < 1) {
			throw new IllegalArgumentException("probe.interval must be at least 1ms, was " + interval);
		}
		if (timeout.toMillis() < 1) {
			throw new IllegalArgumentException("probe.timeout must be at least 1ms, was " + timeout);
		}
		Objects.requireNonNull(sslBundle, "probe.ssl-bundle must be set: a bundle name, or empty for none");
		Objects.requireNonNull(serverName, "probe.server-name must be set: a host name, or empty for none");
		if (!serverName.isEmpty() && !isHostName(serverName)) {
			throw new IllegalArgumentException(
					"probe.server-name must be a DNS host name (letters, digits, '-' and '.'; not an IP address),"
							+ " was '" + serverName + "'");
		}
		if (type == ProbeType.HTTP && !isPath(path)) {
			throw new IllegalArgumentException(
					"probe.path must be a path starting with '/' (URI syntax, e.g. /actuator/health), was '" + path
							+ "'");
		}
	}

	private static boolean isHostName(String name) {
		return name.length() <= 253
				&& name.matches("[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")
				&& !name.matches("[0-9.]+");
	}

	private static boolean isPath(String path) {
		if (!path.startsWith("/") || path.startsWith("//")) {
			return false;
		}
		try {
			URI uri = new URI("http://host" + path);
			return "host".equals(uri.getHost()) && uri.getFragment() == null;
		}
		catch (URISyntaxException ex) {
			return false;
		}
	}

}
