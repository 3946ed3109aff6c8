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
 * @since 0.1.0
 */
public record ProbeRules(ProbeType type, Duration interval, Duration timeout, String path) {

	/** A TCP connect every 5 s, 1 s timeout. */
	public static final ProbeRules DEFAULTS = new ProbeRules(ProbeType.TCP, Duration.ofSeconds(5),
			Duration.ofSeconds(1), "/actuator/health");

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
		if (type == ProbeType.HTTP && !isPath(path)) {
			throw new IllegalArgumentException(
					"probe.path must be a path starting with '/' (URI syntax, e.g. /actuator/health), was '" + path
							+ "'");
		}
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
