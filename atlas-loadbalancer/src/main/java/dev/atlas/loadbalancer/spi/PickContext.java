package dev.atlas.loadbalancer.spi;

import dev.atlas.loadbalancer.context.HashKeys;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link LoadBalancingStrategy} may read when it picks: the request (a hash key, a
 * header) and live per-instance statistics of this caller, by position in the candidate
 * snapshot it was given.
 *
 * <p>
 * Valid only during the {@code choose} call it is passed to. Not thread-safe.
 *
 * @since 0.1.0
 */
public interface PickContext extends CandidateRequest {

	/** What {@link #keyHash} returns for a request without a key. */
	long NO_KEY = HashKeys.NONE;

	/**
	 * The hash of this request's key for consistent hashing, computed in place (no
	 * allocation): the value of a header, else the value of a cookie, read and hashed as
	 * {@link HashKeys} says (64-bit xxHash3 of the characters).
	 * @param header the header naming the key, or {@code null} for none
	 * @param cookie the cookie naming the key when the header is absent, or {@code null}
	 * for none
	 * @return the hash, or {@link #NO_KEY} when the request has neither (or only empty
	 * values)
	 */
	default long keyHash(@Nullable String header, @Nullable String cookie) {
		if (header != null) {
			String value = header(header);
			if (value != null) {
				return HashKeys.hash(value);
			}
		}
		return (cookie != null) ? HashKeys.cookieHash(request(), header("cookie"), cookie) : NO_KEY;
	}

	/**
	 * Requests this caller has in flight to a candidate (started, not completed).
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return {@code >= 0}; {@code 0} when unknown
	 */
	int inFlight(int position);

	/**
	 * This caller's recent latency to a candidate: an exponentially weighted moving
	 * average of completed requests' durations; a failed request's duration never lowers
	 * it (a fast error is not a fast answer: see {@link #failureRate(int)}).
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return ms, {@code >= 0}, or {@link Double#NaN} before any request completed
	 */
	double latencyMillis(int position);

	/**
	 * This caller's recent failure rate of a candidate: an exponentially weighted moving
	 * average of its attempts' outcomes (1 for a failure: an answer with a failure
	 * status, by default every 5xx and 429, or no answer because the instance was
	 * unreachable or stuck; 0 for a success), weight 0.25 for the newest, decaying
	 * towards 0 while the candidate is not called (with the service's
	 * {@code peak-ewma.decay-time}). The load-aware strategies divide a candidate's cost
	 * by {@code 1 - failureRate}.
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return a ratio in 0..1; {@code 0} when unknown (the default)
	 */
	default double failureRate(int position) {
		return 0;
	}

	/**
	 * Whether any candidate may have a {@linkplain #failureRate(int) failure rate} above
	 * 0: when not, a strategy need not read it per candidate (one read per pick in a
	 * healthy fleet).
	 * @return {@code false} when every failure rate is 0 (the default)
	 */
	default boolean anyFailing() {
		return false;
	}

	/**
	 * This caller's peak-sensitive exponentially weighted moving average of a candidate's
	 * response time, decayed to now: a slower response replaces the average at once, a
	 * faster one is blended in with weight {@code 1 - exp(-Δt / decay time)}, and the
	 * average decays towards 0 while no response arrives (Finagle's and Linkerd's
	 * peak-EWMA). The decay time is the service's
	 * {@code atlas.loadbalancer.peak-ewma.decay-time}.
	 * @param position {@code 0 <= position < candidates.size()}
	 * @return ms, {@code >= 0}, or {@link Double#NaN} before any request completed
	 * (implementations provide {@link #peakEwmaMillis(int, long)}: this reads
	 * {@link #nanoTime()} and calls it)
	 */
	default double peakEwmaMillis(int position) {
		return peakEwmaMillis(position, nanoTime());
	}

	/**
	 * {@link #peakEwmaMillis(int)} decayed to a given time, so that a strategy comparing
	 * several candidates reads the clock once.
	 * @param position {@code 0 <= position < candidates.size()}
	 * @param nowNanos the time to decay to, from {@link #nanoTime()}
	 * @return ms, {@code >= 0}, or {@link Double#NaN} before any request completed (the
	 * default)
	 */
	default double peakEwmaMillis(int position, long nowNanos) {
		return Double.NaN;
	}

	/**
	 * The clock of the live statistics, for {@link #peakEwmaMillis(int, long)}.
	 * @return ns, only comparable with itself; {@link System#nanoTime()} by default
	 */
	default long nanoTime() {
		return System.nanoTime();
	}

	/**
	 * Requests this caller has in flight to the service, to all its instances: candidates
	 * of this request or not (other gray lanes, other clusters, ejected ones).
	 * @return {@code >= 0}, or {@code -1} when unknown (the default)
	 */
	default long serviceInFlight() {
		return -1;
	}

}
