package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * What outlier detection knows of a service's instances now, for a candidate filter that
 * runs after outlier ejection and weighs the health of the request's whole lane (cluster
 * affinity's proportional mode counts an ejected instance as unhealthy capacity of its
 * zone). Implementations are thread-safe, and each method is cheap (a volatile read, a
 * hash lookup).
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

}
