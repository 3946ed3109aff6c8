package dev.atlas.loadbalancer.choice;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The rules of {@code ring-hash}.
 *
 * @param header the request header whose value is the hash key (any case), or
 * {@code null}; read from the outbound request, else from the routing context propagated
 * from the inbound request when the header is propagated
 * @param cookie the cookie of the outbound request whose value is the hash key, used when
 * the header is absent, or {@code null}
 * @param virtualNodes points on the ring per instance of average weight, {@code >= 1}; an
 * instance gets {@code virtualNodes × weight ÷ average weight} points, at least one. 160
 * (ketama's and Dubbo's count) keeps each instance's share of the keys within a few
 * percent of its weight's share
 * @param boundedLoad whether consistent hashing with bounded loads applies: an instance
 * that already has {@code loadFactor × average} requests in flight (weighted) is passed
 * over for the next one clockwise
 * @param loadFactor the bound, {@code > 1}: 1.25 as suggested by Mirrokni, Thorup and
 * Zadimoghaddam ("Consistent Hashing with Bounded Loads", SODA 2018), so that no instance
 * holds more than 25 % over the average while at most a few keys move
 * @since 0.1.0
 */
public record HashRules(@Nullable String header, @Nullable String cookie, int virtualNodes, boolean boundedLoad,
		double loadFactor) {

	/** Default points per instance of average weight. */
	public static final int DEFAULT_VIRTUAL_NODES = 160;

	/** Default bound of bounded loads. */
	public static final double DEFAULT_LOAD_FACTOR = 1.25;

	/** No key source, 160 points, bounded load off. */
	public static final HashRules DEFAULTS = new HashRules(null, null, DEFAULT_VIRTUAL_NODES, false,
			DEFAULT_LOAD_FACTOR);

	/**
	 * Validates and normalizes: blank names become {@code null}; the header name is kept
	 * in lower case.
	 * @throws IllegalArgumentException if {@code virtualNodes < 1} or
	 * {@code loadFactor <= 1} or not finite
	 */
	public HashRules {
		header = (header == null || header.isBlank()) ? null : header.trim().toLowerCase(Locale.ROOT);
		cookie = (cookie == null || cookie.isBlank()) ? null : cookie.trim();
		if (virtualNodes < 1) {
			throw new IllegalArgumentException("virtual-nodes must be an integer >= 1, was " + virtualNodes);
		}
		if (!(loadFactor > 1) || Double.isInfinite(loadFactor)) {
			throw new IllegalArgumentException("load-factor must be a finite number > 1, was " + loadFactor);
		}
	}

	/**
	 * Whether a key source is configured.
	 * @return {@code true} when a header or a cookie names the key
	 */
	public boolean hasKeySource() {
		return this.header != null || this.cookie != null;
	}

}
