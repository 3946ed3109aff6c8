package dev.atlas.loadbalancer.context;

import org.jspecify.annotations.Nullable;

/**
 * The engine's one parser of {@code Cookie} request headers ({@code a=1; canary=1}, RFC
 * 6265 section 4.2): finds a cookie's value in place, without allocating, for whoever
 * reads cookies (lane rules through {@link RequestHeaders#cookie}, consistent hashing
 * through {@link HashKeys}).
 *
 * <p>
 * Rules: pairs are separated by {@code ;}; spaces around a pair and around its value are
 * ignored (browsers and clients write {@code "; "}); names are matched whole and
 * case-sensitively; a value in double quotes is taken without them. Stateless and
 * thread-safe.
 *
 * @since 0.1.0
 */
public final class Cookies {

	/** What {@link #bounds} returns when the line has no such cookie. */
	public static final long ABSENT = -1;

	private Cookies() {
	}

	/**
	 * Where a cookie's value is in one {@code Cookie} header. Allocates nothing.
	 * @param line the header's value, may be {@code null}
	 * @param name the cookie name, case-sensitive
	 * @return {@link #ABSENT} when the line has no such cookie (or {@code name} is
	 * empty), else the value's start and end indexes in {@code line}, packed as
	 * {@code start << 32 | end} (read them with {@link #start} and {@link #end}; the
	 * value may be empty)
	 */
	public static long bounds(@Nullable String line, String name) {
		if (line == null || name.isEmpty()) {
			return ABSENT;
		}
		int length = line.length();
		int start = 0;
		while (start < length) {
			int end = line.indexOf(';', start);
			if (end < 0) {
				end = length;
			}
			int from = start;
			while (from < end && line.charAt(from) == ' ') {
				from++;
			}
			int nameEnd = from + name.length();
			if (nameEnd < end && line.startsWith(name, from) && line.charAt(nameEnd) == '=') {
				return trimmed(line, nameEnd + 1, end);
			}
			start = end + 1;
		}
		return ABSENT;
	}

	/**
	 * The bounds of a value taken alone (e.g. from a cookie map), as {@link #bounds}
	 * gives them: without surrounding spaces and double quotes. Allocates nothing.
	 * @param value a cookie's value
	 * @return its bounds, packed as by {@link #bounds}
	 */
	public static long valueBounds(String value) {
		return trimmed(value, 0, value.length());
	}

	/**
	 * A value's bounds without surrounding spaces and double quotes.
	 */
	private static long trimmed(String line, int from, int to) {
		while (to > from && line.charAt(to - 1) == ' ') {
			to--;
		}
		while (from < to && line.charAt(from) == ' ') {
			from++;
		}
		if (to - from >= 2 && line.charAt(from) == '"' && line.charAt(to - 1) == '"') {
			from++;
			to--;
		}
		return ((long) from << 32) | to;
	}

	/**
	 * The start of a value found by {@link #bounds}.
	 * @param bounds what {@link #bounds} returned, not {@link #ABSENT}
	 * @return the index of the value's first character
	 */
	public static int start(long bounds) {
		return (int) (bounds >>> 32);
	}

	/**
	 * The end of a value found by {@link #bounds}.
	 * @param bounds what {@link #bounds} returned, not {@link #ABSENT}
	 * @return the index after the value's last character
	 */
	public static int end(long bounds) {
		return (int) bounds;
	}

	/**
	 * A cookie's value in one {@code Cookie} header. Allocates only for the value found.
	 * @param line the header's value, may be {@code null}
	 * @param name the cookie name, case-sensitive
	 * @return the value (possibly empty), or {@code null} when the header has no such
	 * cookie
	 */
	public static @Nullable String value(@Nullable String line, String name) {
		long bounds = bounds(line, name);
		return (bounds != ABSENT && line != null) ? line.substring(start(bounds), end(bounds)) : null;
	}

}
