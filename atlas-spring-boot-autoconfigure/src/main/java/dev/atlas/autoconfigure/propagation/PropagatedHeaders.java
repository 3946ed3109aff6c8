package dev.atlas.autoconfigure.propagation;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;

import dev.atlas.loadbalancer.context.RoutingContext;
import org.jspecify.annotations.Nullable;

/**
 * The set of header names Atlas carries from inbound requests to outbound calls, with the
 * two operations every adapter needs: capture them from an inbound request, and write the
 * missing ones on an outbound request. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class PropagatedHeaders {

	private volatile String[] names;

	/**
	 * Creates the set.
	 * @param names header names, lower-case
	 */
	public PropagatedHeaders(Set<String> names) {
		this.names = names.toArray(new String[0]);
	}

	/**
	 * Adds a header name as the set holds them: trimmed and lower-cased; nothing for
	 * {@code null} or blank.
	 * @param names the names so far, in order
	 * @param header a configured header name, may be {@code null}
	 */
	public static void add(Set<String> names, @Nullable String header) {
		if (header != null && !header.isBlank()) {
			names.add(header.trim().toLowerCase(Locale.ROOT));
		}
	}

	/**
	 * The header names.
	 * @return lower-case names
	 */
	public List<String> names() {
		return List.of(this.names);
	}

	/**
	 * Replaces the header names (a runtime change of configuration); requests captured
	 * before keep what they captured.
	 * @param names header names, lower-case
	 */
	public void names(Set<String> names) {
		this.names = names.toArray(new String[0]);
	}

	/**
	 * Captures the propagated headers of an inbound request.
	 * @param header reads one header of the inbound request (case-insensitively),
	 * {@code null} when absent
	 * @return the context, {@link RoutingContext#EMPTY} when none is present
	 */
	public RoutingContext capture(Function<String, @Nullable String> header) {
		Map<String, String> found = null;
		for (String name : this.names) {
			String value = header.apply(name);
			if (value != null && !value.isBlank()) {
				if (found == null) {
					found = new LinkedHashMap<>();
				}
				found.put(name, value);
			}
		}
		return (found != null) ? RoutingContext.of(found) : RoutingContext.EMPTY;
	}

	/**
	 * Writes the context's headers that the outbound request does not carry yet: an
	 * explicit header set by application code wins over the propagated one.
	 * @param context may be {@code null}
	 * @param present tells whether the outbound request already has a header
	 * @param add adds a header to the outbound request
	 */
	public void write(@Nullable RoutingContext context, Function<String, Boolean> present,
			BiConsumer<String, String> add) {
		if (context == null || context.isEmpty()) {
			return;
		}
		for (Map.Entry<String, String> header : context.headers().entrySet()) {
			if (!present.apply(header.getKey())) {
				add.accept(header.getKey(), header.getValue());
			}
		}
	}

}
