package dev.atlas.loadbalancer.stats;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Per-instance call statistics of one service, as this caller sees them: picks (how often the balancer
 * chose the instance) and in-flight requests (started, not yet completed). Fed by the balancer and by a
 * Spring Cloud {@code LoadBalancerLifecycle}; read by the actuator view.
 *
 * <p>Instances are keyed by instance id (else {@code host:port}); at most {@value #MAX_INSTANCES} are
 * tracked, least recently used first out. Thread-safe; recording takes no lock and allocates nothing for
 * an instance already tracked.
 */
public final class InstanceStats {

	/** Most instances tracked per service. */
	public static final int MAX_INSTANCES = 10_000;

	private final Cache<String, Counts> counts = Caffeine.newBuilder().maximumSize(MAX_INSTANCES).build();

	private final Map<String, Counts> view = this.counts.asMap();

	/**
	 * Records a pick.
	 * @param instance the chosen instance; not {@code null}
	 */
	public void picked(ServiceInstance instance) {
		counts(instance).picks.increment();
	}

	/**
	 * Records a request start.
	 * @param instance the instance called; not {@code null}
	 */
	public void started(ServiceInstance instance) {
		counts(instance).inFlight.incrementAndGet();
	}

	/**
	 * Records a request completion (success or failure).
	 * @param instance the instance called; not {@code null}
	 */
	public void completed(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		if (counts != null) {
			counts.inFlight.updateAndGet((n) -> Math.max(0, n - 1));
		}
	}

	/**
	 * Picks of an instance so far.
	 * @param instance not {@code null}
	 * @return {@code >= 0}
	 */
	public long picks(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		return (counts != null) ? counts.picks.sum() : 0;
	}

	/**
	 * Requests to an instance started and not completed.
	 * @param instance not {@code null}
	 * @return {@code >= 0}
	 */
	public int inFlight(ServiceInstance instance) {
		Counts counts = this.view.get(key(instance));
		return (counts != null) ? counts.inFlight.get() : 0;
	}

	private Counts counts(ServiceInstance instance) {
		String key = key(instance);
		Counts counts = this.view.get(key);
		return (counts != null) ? counts : this.view.computeIfAbsent(key, (k) -> new Counts());
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

		final LongAdder picks = new LongAdder();

		final AtomicInteger inFlight = new AtomicInteger();

	}

}
