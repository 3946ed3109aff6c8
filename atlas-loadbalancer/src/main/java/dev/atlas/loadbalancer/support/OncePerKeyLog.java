package dev.atlas.loadbalancer.support;

import java.util.function.Consumer;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * Runs an action (typically a WARN log line and a counter increment) at most once per
 * key, so that a bad value that is seen on every instance-list refresh is reported once
 * and not every 35 seconds.
 *
 * <p>
 * Keys are remembered in a bounded Caffeine cache ({@value #MAX_KEYS} keys); a key
 * evicted from it may be reported again, which keeps memory bounded when instances churn.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class OncePerKeyLog {

	/** Maximum number of remembered keys. */
	public static final int MAX_KEYS = 10_000;

	private final Cache<String, Boolean> seen = Caffeine.newBuilder().maximumSize(MAX_KEYS).build();

	/**
	 * Runs {@code action} with {@code key} if this key has not been reported before.
	 * @param key identifies the fact being reported, e.g.
	 * {@code "user-service/10.0.0.1:8080/weight=abc"}
	 * @param action called at most once per key, on the calling thread
	 * @return {@code true} if the action ran
	 */
	public boolean once(String key, Consumer<String> action) {
		if (this.seen.asMap().putIfAbsent(key, Boolean.TRUE) != null) {
			return false;
		}
		action.accept(key);
		return true;
	}

}
