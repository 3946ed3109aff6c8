package dev.atlas.loadbalancer.context;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The routing-relevant headers of the inbound request being served (e.g.
 * {@code X-Service-Version: v2}), carried to every outbound call made on its behalf: on
 * the same thread, on other threads and in reactive chains (see
 * {@link RoutingContextHolder}).
 *
 * <p>
 * Header names are case-insensitive. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class RoutingContext {

	/** A context without headers. */
	public static final RoutingContext EMPTY = new RoutingContext(Map.of());

	private final Map<String, String> headers;

	private RoutingContext(Map<String, String> headers) {
		this.headers = headers;
	}

	/**
	 * Creates a context.
	 * @param headers header name to value; {@code null} or blank values are dropped; not
	 * {@code null}
	 * @return {@link #EMPTY} when nothing is left, else a new context
	 */
	public static RoutingContext of(Map<String, String> headers) {
		Map<String, String> kept = new LinkedHashMap<>();
		headers.forEach((name, value) -> {
			if (name != null && value != null && !value.isBlank()) {
				kept.put(name.toLowerCase(Locale.ROOT), value.trim());
			}
		});
		return kept.isEmpty() ? EMPTY : new RoutingContext(Collections.unmodifiableMap(kept));
	}

	/**
	 * The value of a header.
	 * @param name header name, any case
	 * @return the trimmed value, or {@code null} when absent
	 */
	public @Nullable String get(String name) {
		if (this.headers.isEmpty()) {
			return null;
		}
		// Names are kept in lower case, which is how a load balancer asks for them: found
		// without lower-casing (a scan of the name) first.
		String value = this.headers.get(name);
		if (value != null) {
			return value;
		}
		String lowerCase = name.toLowerCase(Locale.ROOT);
		return lowerCase.equals(name) ? null : this.headers.get(lowerCase);
	}

	/**
	 * This context with one header set (replacing a value it had).
	 * @param name header name, any case
	 * @param value the value; blank removes nothing and adds nothing
	 * @return a new context, or this one when {@code value} is blank
	 */
	public RoutingContext with(String name, String value) {
		if (value.isBlank()) {
			return this;
		}
		Map<String, String> headers = new LinkedHashMap<>(this.headers);
		headers.put(name.toLowerCase(Locale.ROOT), value.trim());
		return new RoutingContext(Collections.unmodifiableMap(headers));
	}

	/**
	 * All headers, names lower-cased.
	 * @return an unmodifiable map
	 */
	public Map<String, String> headers() {
		return this.headers;
	}

	/**
	 * Whether the context carries no header.
	 * @return {@code true} for {@link #EMPTY}
	 */
	public boolean isEmpty() {
		return this.headers.isEmpty();
	}

	@Override
	public String toString() {
		return "RoutingContext" + this.headers;
	}

}
