package dev.atlas.loadbalancer.outlier;

import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.loadbalancer.instance.InstanceKey;

import org.springframework.cloud.client.ServiceInstance;

/**
 * What outlier detection keeps of one instance that is failing, ejected, or has an
 * ejection history (Envoy's per-host monitor, apart from the detector's rules and the
 * table of ejections): its failure counts, its current ejection and its history.
 *
 * <p>
 * Times are epoch milliseconds of the detector's {@code Clock}, {@code 0} for "none";
 * counts are numbers of requests or ejections. Thread-safe as the detector uses it: the
 * failure counts are atomic; the ejection fields are written under the detector's lock
 * and read without it (volatile); {@link #callsSeen} and {@link #idleSince} belong to the
 * probe chain of the instance (one probe at a time).
 */
final class TrackedInstance {

	/** The instance (id, host, port). */
	final InstanceKey key;

	/** 5xx answers and gateway failures in a row. */
	final AtomicInteger consecutive5xx = new AtomicInteger();

	/** Gateway failures in a row. */
	final AtomicInteger consecutiveGateway = new AtomicInteger();

	/** The last object the instance was seen as (probed by its host, port, scheme). */
	volatile ServiceInstance instance;

	/** When it last failed. */
	volatile long lastFailureAt;

	/**
	 * When its current run of failures in a row began; {@code 0} while none is known
	 * (read as a run that has just begun).
	 */
	volatile long runStartedAt;

	/** 503 answers in a row, up to now (any other outcome resets it). */
	final AtomicInteger consecutiveOverloaded = new AtomicInteger();

	/** When it last answered 503; {@code 0} for never. */
	volatile long lastOverloadedAt;

	/**
	 * Whether its current (or last) ejection was for failures that prove it gone
	 * ({@link Outcome#UNREACHABLE}), not for its answers.
	 */
	volatile boolean ejectedAsGone;

	/** When its current (or last) ejection began. */
	volatile long ejectedAt;

	/** When its current ejection time ends; {@code 0} while not ejected. */
	volatile long ejectedUntil;

	/** When it last returned to service; {@code 0} before. */
	volatile long returnedAt;

	/** Times ejected, the multiplier of its last ejection time. */
	volatile int timesEjected;

	/**
	 * Its ejections so far: a probe chain serves the ejection it was started for, and
	 * ends when the instance is ejected again (a chain of an earlier ejection still
	 * scheduled then stops, so that one probe runs at a time).
	 */
	volatile int ejections;

	/** Probes failed in its current ejection. */
	volatile int failedProbes;

	/** The service's request count at the last probe that saw it change. */
	long callsSeen;

	/** Since when the service's request count has not changed, while probing. */
	long idleSince;

	/**
	 * @param key the instance's identity
	 * @param instance the instance as last seen
	 */
	TrackedInstance(InstanceKey key, ServiceInstance instance) {
		this.key = key;
		this.instance = instance;
	}

}
