package dev.atlas.loadbalancer.context;

import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.util.MultiValueMap;

/**
 * Reads a request's key for consistent hashing ({@code ring-hash}) and hashes it in
 * place, allocating nothing: the value of a header as it is, or the value of a cookie
 * (trimmed, without double quotes; see {@link Cookies}). Where the cookie is looked for:
 * the {@code Cookie} header as sent (Spring Cloud's cookie map is not reliable for it:
 * built by splitting the whole header at {@code =} for RestTemplate and RestClient,
 * absent for Feign), else the request's cookie map (WebClient's {@code cookie(…)} and the
 * gateway keep cookies out of the headers).
 *
 * <p>
 * The hash is 64-bit xxHash3 (XXH3, by Yann Collet) of the key's UTF-16 characters, as
 * the ring's own points are hashed. {@link #NONE} stands for "no key" (a real key hashing
 * to it is taken as keyless, a 2<sup>-64</sup> chance). Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class HashKeys {

	/** The hash that stands for "no key". */
	public static final long NONE = Long.MIN_VALUE;

	private static final LongHashFunction HASH = LongHashFunction.xx3();

	private HashKeys() {
	}

	/**
	 * The hash of a key given whole (a header's value).
	 * @param key the key
	 * @return its hash
	 */
	public static long hash(String key) {
		return hash(key, 0, key.length());
	}

	/**
	 * The hash of part of a text, in place.
	 * @param text the text
	 * @param from the first character's index
	 * @param to the index after the last character, {@code >= from}
	 * @return the hash of {@code text.substring(from, to)}
	 */
	public static long hash(String text, int from, int to) {
		return HASH.hashChars(text, from, to - from);
	}

	/**
	 * The hash of a cookie's value: in the {@code Cookie} header line if it is there,
	 * else in the request's cookie map.
	 * @param request the load-balancing request, may be {@code null}
	 * @param cookieHeader the request's {@code Cookie} header as its filters see it, may
	 * be {@code null}
	 * @param name the cookie name, case-sensitive
	 * @return the hash, or {@link #NONE} when the cookie is absent or empty
	 */
	public static long cookieHash(@Nullable Request<?> request, @Nullable String cookieHeader, String name) {
		if (cookieHeader != null) {
			long hash = cookieHash(cookieHeader, name);
			if (hash != NONE) {
				return hash;
			}
		}
		if (request != null && request.getContext() instanceof RequestDataContext data
				&& data.getClientRequest() != null) {
			MultiValueMap<String, String> map = data.getClientRequest().getCookies();
			String value = (map != null) ? map.getFirst(name) : null;
			if (value != null) {
				return hash(value, Cookies.valueBounds(value));
			}
		}
		return NONE;
	}

	/**
	 * The hash of a cookie's value in one {@code Cookie} header ({@code a=1; b=2}), found
	 * in place.
	 * @param line the header's value
	 * @param name the cookie name, case-sensitive
	 * @return the hash, or {@link #NONE} when the cookie is absent or empty
	 */
	public static long cookieHash(String line, String name) {
		long bounds = Cookies.bounds(line, name);
		return (bounds != Cookies.ABSENT) ? hash(line, bounds) : NONE;
	}

	/** The hash of a non-empty value within bounds, else {@link #NONE}. */
	private static long hash(String text, long bounds) {
		int from = Cookies.start(bounds);
		int to = Cookies.end(bounds);
		return (to > from) ? hash(text, from, to) : NONE;
	}

}
