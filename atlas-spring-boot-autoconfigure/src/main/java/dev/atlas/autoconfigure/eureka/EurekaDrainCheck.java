package dev.atlas.autoconfigure.eureka;

import java.time.Duration;
import java.util.Optional;

/**
 * Whether {@code atlas.lifecycle.drain} covers the time Eureka's callers take to notice a
 * deregistration. A caller's Eureka client fetches the registry every
 * {@code eureka.client.registry-fetch-interval-seconds} (30 s by default) and Atlas
 * refreshes its lists at each fetch; the server adds up to
 * {@code eureka.server.response-cache-update-interval-ms} (30 s) unless
 * {@code eureka.server.use-read-only-response-cache=false}. A client cannot see the
 * server's settings nor other callers', so the check takes this application's own fetch
 * interval as the callers' and reports a drain shorter than it. Stateless.
 */
final class EurekaDrainCheck {

	private EurekaDrainCheck() {
	}

	/**
	 * The warning to log, if any.
	 * @param drain {@code atlas.lifecycle.drain}
	 * @param fetchIntervalSeconds {@code eureka.client.registry-fetch-interval-seconds}
	 * @return the warning, or empty when the drain is at least the fetch interval
	 */
	static Optional<String> warning(Duration drain, int fetchIntervalSeconds) {
		Duration fetch = Duration.ofSeconds(Math.max(0, fetchIntervalSeconds));
		if (drain.compareTo(fetch) >= 0) {
			return Optional.empty();
		}
		return Optional
			.of(("atlas.lifecycle.drain (%d ms) is shorter than eureka.client.registry-fetch-interval-seconds "
					+ "(%d s): callers fetching Eureka at that interval can still call this instance after it stopped "
					+ "(their retries and outlier ejection then cover it). Set atlas.lifecycle.drain to at least the "
					+ "callers' fetch interval plus the server's response cache "
					+ "(eureka.server.response-cache-update-interval-ms, unless "
					+ "eureka.server.use-read-only-response-cache=false), or shorten the fetch interval")
				.formatted(drain.toMillis(), fetchIntervalSeconds));
	}

}
