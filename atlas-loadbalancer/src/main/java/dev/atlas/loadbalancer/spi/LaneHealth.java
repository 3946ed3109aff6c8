package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * What outlier detection knows of a service's instances now, for a candidate filter that
 * runs after outlier ejection and weighs the health of the request's whole lane (cluster
 * affinity's proportional mode counts an ejected instance as unhealthy capacity of its
 * zone). Implementations are thread-safe, and each method is cheap (a volatile read, a
 * hash lookup, a scan of a lane). Each method reads the ejections in force when it is
 * called: an ejection or a return between two calls is seen by the later one only (a
 * caller memoizes on {@link #ejectionVersion()} read first, and recomputes at the next
 * version).
 *
 * @since 0.1.0
 */
public interface LaneHealth {

	/**
	 * A value that changes (by identity) on every ejection and return, for a filter that
	 * memoizes a decision on the ejections.
	 * @return not {@code null}; compared by identity
	 */
	Object ejectionVersion();

	/**
	 * Whether an instance is ejected now.
	 * @param key the instance
	 * @return {@code true} while it is ejected
	 */
	boolean isEjected(InstanceKey key);

	/**
	 * The lane a candidate set was left from by outlier ejection.
	 * @param candidates what outlier ejection returned for a request
	 * @return the lane before the ejected instances were removed; {@code null} when
	 * {@code candidates} is not the result of removing some (nothing of its lane was
	 * ejected, or the panic threshold kept every instance)
	 */
	@Nullable InstanceSnapshot laneBefore(InstanceSnapshot candidates);

	/**
	 * Whether outlier ejection would keep a lane whole now because of its panic threshold
	 * (too few of its instances would remain), by the ejections in force.
	 * @param lane what outlier ejection returned for a request (with {@link #laneBefore}
	 * {@code null})
	 * @return {@code true} when some of its instances are ejected and the rest is below
	 * the panic threshold
	 */
	boolean panics(InstanceSnapshot lane);

}
