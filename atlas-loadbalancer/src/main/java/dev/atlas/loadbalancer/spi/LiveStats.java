package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;

/**
 * Live per-instance statistics of one service, read by position in a snapshot: what the
 * pipeline hands strategies through {@link PickContext}. Implementations resolve the
 * instances of a snapshot to their statistics once per snapshot, not per request.
 *
 * <p>
 * Thread-safe; reads take no lock.
 *
 * @since 0.1.0
 */
public interface LiveStats {

	/** No statistics: nothing in flight, no latency known. */
	LiveStats NONE = new LiveStats() {

		@Override
		public int inFlight(InstanceSnapshot candidates, int position) {
			return 0;
		}

		@Override
		public double latencyMillis(InstanceSnapshot candidates, int position) {
			return Double.NaN;
		}

	};

	/**
	 * Requests in flight to the instance at a position.
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return {@code >= 0}
	 */
	int inFlight(InstanceSnapshot candidates, int position);

	/**
	 * Recent latency of the instance at a position.
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return ms, or {@link Double#NaN} when unknown
	 */
	double latencyMillis(InstanceSnapshot candidates, int position);

	/**
	 * Recent failure rate of the instance at a position (see
	 * {@link PickContext#failureRate(int)}).
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return a ratio in 0..1; {@code 0} when unknown (this default)
	 */
	default double failureRate(InstanceSnapshot candidates, int position) {
		return 0;
	}

	/**
	 * Whether any instance may have a failure rate above 0 (see
	 * {@link PickContext#anyFailing()}).
	 * @return {@code false} when every failure rate is 0 (this default)
	 */
	default boolean anyFailing() {
		return false;
	}

	/**
	 * Peak-sensitive moving average of the response time of the instance at a position,
	 * decayed to now (see {@link PickContext#peakEwmaMillis(int)}).
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return ms, or {@link Double#NaN} when unknown (implementations provide
	 * {@link #peakEwmaMillis(InstanceSnapshot, int, long)}: this reads
	 * {@link #nanoTime()} and calls it)
	 */
	default double peakEwmaMillis(InstanceSnapshot candidates, int position) {
		return peakEwmaMillis(candidates, position, nanoTime());
	}

	/**
	 * Peak-sensitive moving average of the response time of the instance at a position,
	 * decayed to a given time: lets one pick read the clock once for all its candidates.
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @param nowNanos the time to decay to, from {@link #nanoTime()}
	 * @return ms, or {@link Double#NaN} when unknown (the default)
	 */
	default double peakEwmaMillis(InstanceSnapshot candidates, int position, long nowNanos) {
		return Double.NaN;
	}

	/**
	 * The clock these statistics are kept on.
	 * @return ns, only comparable with itself; {@link System#nanoTime()} by default
	 */
	default long nanoTime() {
		return System.nanoTime();
	}

	/**
	 * Requests this caller has in flight to the service, to all its instances (candidates
	 * of a request or not).
	 * @return {@code >= 0}, or {@code -1} when unknown (the default)
	 */
	default long serviceInFlight() {
		return -1;
	}

	/**
	 * Takes a slot of the instance at a position for a request about to be sent, unless
	 * it already has {@code max} requests in flight: a reserved slot counts as in flight
	 * at once, and the request's start then claims it instead of counting again, so that
	 * concurrent picks never take an instance over {@code max}. An implementation that
	 * reserves must let the request's start claim the slot (not count it again) and must
	 * release a slot no start claims; one that cannot reserve only compares (this
	 * default).
	 * @param candidates a snapshot
	 * @param position {@code 0 <= position < candidates.size()}
	 * @param max the limit, {@code >= 1}
	 * @return {@code true} when the request may go to the instance
	 */
	default boolean tryReserve(InstanceSnapshot candidates, int position, int max) {
		return inFlight(candidates, position) < max;
	}

}
