package dev.atlas.loadbalancer.stats;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Per-instance request statistics of one service, as this caller sees them: requests sent (each attempt
 * counts, retries included) and requests in flight (started, not yet completed). Fed by Spring Cloud
 * LoadBalancer's request lifecycle ({@code LoadBalancerLifecycle.onStartRequest} / {@code onComplete}, which
 * RestTemplate, RestClient, WebClient, Feign and Spring Cloud Gateway all call); read by the actuator view
 * and the {@code atlas.picks} meter.
 *
 * <p>Counting happens when a request starts, not in the balancer's {@code choose}: a pick then writes no
 * memory that other threads write too. (Counted in {@code choose}, a per-instance counter made a pick with
 * two threads over 10,000 instances twice as expensive, from cache lines moving between cores; the request
 * lifecycle touches per-instance state anyway.)
 *
 * <p>Instances are keyed by instance id (else {@code host:port}). Memory stays bounded under instance churn
 * (every deployment brings new instance ids): when a new instance appears while the table holds its
 * threshold ({@value #MAX_INSTANCES} at first), a clean-up forgets every instance without a request since the
 * previous clean-up and none in flight; the threshold then becomes twice what is left (at least
 * {@value #MAX_INSTANCES}), so clean-ups cost O(1) amortized and a fleet larger than the threshold is tracked
 * whole. Thread-safe and lock-free; recording allocates nothing for a tracked instance.
 */
public final class InstanceStats {

	/** Number of tracked instances at which a new instance first triggers a clean-up. */
	public static final int MAX_INSTANCES = 10_000;

	private final int minThreshold;

	private final Map<String, Counts> view = new ConcurrentHashMap<>();

	/** Requests of the instances a clean-up forgot, so that {@link #totalRequests()} never decreases. */
	private final LongAdder forgotten = new LongAdder();

	private volatile int threshold;

	/** Creates empty statistics. */
	public InstanceStats() {
		this(MAX_INSTANCES);
	}

	/**
	 * Creates empty statistics with another first clean-up threshold (tests).
	 * @param minThreshold {@code >= 1}
	 */
	InstanceStats(int minThreshold) {
		this.minThreshold = minThreshold;
		this.threshold = minThreshold;
	}

	/**
	 * Records a request start.
	 * @param instance the instance called; not {@code null}
	 */
	public void started(ServiceInstance instance) {
		counts(instance).started.increment();
	}

	/**
	 * Records a request completion (success or failure) of a request recorded by {@link #started}.
	 * @param instance the instance called; not {@code null}
	 */
	public void completed(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		if (counts != null) {
			counts.completed.increment();
		}
	}

	/**
	 * Requests sent to an instance so far.
	 * @param instance not {@code null}
	 * @return {@code >= 0}; {@code 0} for an instance not tracked (never called, or forgotten)
	 */
	public long requests(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		return (counts != null) ? counts.started.sum() : 0;
	}

	/**
	 * Requests to an instance started and not completed.
	 * @param instance not {@code null}
	 * @return {@code >= 0}
	 */
	public long inFlight(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		return (counts != null) ? counts.inFlight() : 0;
	}

	/**
	 * Requests to all instances so far, forgotten ones included. O(tracked instances).
	 * @return {@code >= 0}; never decreases
	 */
	public long totalRequests() {
		long total = this.forgotten.sum();
		for (Counts counts : this.view.values()) {
			total += counts.started.sum();
		}
		return total;
	}

	/**
	 * Number of instances tracked.
	 * @return {@code >= 0}
	 */
	public int size() {
		return this.view.size();
	}

	private Counts counts(ServiceInstance instance) {
		String key = key(instance);
		Counts counts = this.view.get(key);
		if (counts != null) {
			return counts;
		}
		if (this.view.size() >= this.threshold) {
			cleanUp();
		}
		return this.view.computeIfAbsent(key, (k) -> new Counts());
	}

	// O(tracked instances), then not again before the table doubles. Concurrent callers may both scan; the
	// outcome is the same.
	private void cleanUp() {
		for (Iterator<Counts> it = this.view.values().iterator(); it.hasNext();) {
			Counts counts = it.next();
			long started = counts.started.sum();
			if (started == counts.startedAtLastCleanUp && counts.inFlight() == 0) {
				it.remove();
				this.forgotten.add(started);
			}
			else {
				counts.startedAtLastCleanUp = started;
			}
		}
		this.threshold = Math.max(this.minThreshold, 2 * this.view.size());
	}

	/**
	 * The key of an instance.
	 * @param instance not {@code null}
	 * @return its instance id, else {@code host:port}
	 */
	public static String key(ServiceInstance instance) {
		String id = instance.getInstanceId();
		return (id != null) ? id : instance.getHost() + ':' + instance.getPort();
	}

	private static final class Counts {

		final LongAdder started = new LongAdder();

		final LongAdder completed = new LongAdder();

		/** Requests seen by the previous clean-up; read and written by clean-ups. */
		volatile long startedAtLastCleanUp;

		long inFlight() {
			// completed first: a request completing between the two reads is then never counted negative
			long done = this.completed.sum();
			return Math.max(0, this.started.sum() - done);
		}

	}

}
