package dev.atlas.loadbalancer.outlier;

import java.time.Clock;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.support.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The ejection state of one service's outlier detection (Envoy's
 * {@code DetectorImpl::ejectHost} / {@code unejectHost} and their bookkeeping, apart from
 * the counting of outcomes): which instances are tracked ({@link TrackedInstance}:
 * failing, ejected or with an ejection history), which are ejected ({@link Ejections}),
 * and every transition between them: tracking a failing instance, ejecting it (bounded by
 * {@code max-ejection-percent}, for {@code base-ejection-time × n} capped at
 * {@code max-ejection-time}), returning it when its probe passes, forgetting it when the
 * registry no longer lists it or nobody calls the service, and dropping entries that no
 * longer matter. The {@link Prober} it starts probes each ejected instance.
 *
 * <p>
 * Times are epoch milliseconds of the detector's {@link Clock}. Thread-safe: the tracked
 * instances and the ejections are arrays and maps replaced as a whole, read without a
 * lock and without allocating (a pick reads {@link #ejected()} only); every transition
 * takes this ejector's lock (never taken on a pick).
 */
final class Ejector {

	private static final Logger log = LoggerFactory.getLogger(OutlierDetector.class);

	private static final TrackedInstance[] NONE_TRACKED = {};

	private final OutlierDetector detector;

	private final String serviceId;

	private final Clock clock;

	private final OutlierMeters meters;

	private final Prober prober;

	/**
	 * Instances with a failure count, an ejection, or an ejection history: few (a healthy
	 * service has none; when the whole fleet fails, as in an overload, up to the fleet),
	 * so an array replaced as a whole under {@link #transitions} and scanned without a
	 * lock or an allocation.
	 */
	private volatile TrackedInstance[] tracked = NONE_TRACKED;

	private final Object transitions = new Object();

	private final AtomicBoolean panicWarned = new AtomicBoolean();

	private volatile Ejections ejected = Ejections.NONE;

	private volatile @Nullable Supplier<InstanceSnapshot> instances;

	/**
	 * @param detector the rules, the traffic and whether it is closed
	 * @param serviceId the service, for log lines
	 * @param clock the time of ejections and returns
	 * @param scheduler runs the probes
	 * @param meters counts ejections
	 */
	Ejector(OutlierDetector detector, String serviceId, Clock clock, Scheduler scheduler, OutlierMeters meters) {
		this.detector = detector;
		this.serviceId = serviceId;
		this.clock = clock;
		this.meters = meters;
		this.prober = new Prober(detector, this, clock, scheduler);
	}

	/**
	 * Where to read the service's current instances.
	 * @param instances the service's last instance list
	 */
	void instances(Supplier<InstanceSnapshot> instances) {
		this.instances = instances;
	}

	/**
	 * The instances tracked now.
	 * @return the current array; not to be modified
	 */
	TrackedInstance[] tracked() {
		return this.tracked;
	}

	/**
	 * The state of a tracked instance. Lock-free, allocates nothing.
	 * @param instance an instance
	 * @return its state, or {@code null} when it is not tracked
	 */
	@Nullable TrackedInstance find(ServiceInstance instance) {
		return find(this.tracked, instance);
	}

	/**
	 * The instances ejected now.
	 * @return an immutable set, the same object until an ejection or return
	 */
	Ejections ejected() {
		return this.ejected;
	}

	/**
	 * Returns every ejected instance and forgets every instance (detection turned off).
	 * @return how many instances were ejected
	 */
	int clear() {
		synchronized (this.transitions) {
			int returned = this.ejected.size();
			this.ejected = Ejections.NONE;
			this.tracked = NONE_TRACKED;
			this.panicWarned.set(false);
			return returned;
		}
	}

	/**
	 * Whether a panic episode starts now (the first since no instance was ejected).
	 * @return {@code true} once per episode
	 */
	boolean panicStarts() {
		return !this.panicWarned.get() && this.panicWarned.compareAndSet(false, true);
	}

	private static @Nullable TrackedInstance find(TrackedInstance[] tracked, ServiceInstance instance) {
		for (TrackedInstance health : tracked) {
			if (health.key.matches(instance)) {
				return health;
			}
		}
		return null;
	}

	/**
	 * A success: resets the counts; an instance with nothing left to remember is dropped.
	 */
	void succeeded(TrackedInstance health) {
		if (health.consecutive5xx.get() != 0) {
			health.consecutive5xx.set(0);
		}
		if (health.consecutiveGateway.get() != 0) {
			health.consecutiveGateway.set(0);
		}
		if (health.consecutiveOverloaded.get() != 0) {
			health.consecutiveOverloaded.set(0);
		}
		if (health.runStartedAt != 0) {
			health.runStartedAt = 0;
		}
		if (health.ejectedUntil == 0 && (health.timesEjected == 0 || decayedTimes(health, this.clock.millis()) == 0)) {
			synchronized (this.transitions) {
				if (health.ejectedUntil == 0 && health.consecutive5xx.get() == 0
						&& health.consecutiveGateway.get() == 0) {
					untrack(health);
				}
			}
		}
	}

	/**
	 * Whether the fleet is overloaded as a whole, as one instance's 503 answers are
	 * judged: another instance of the service is shedding load now (its last two answers
	 * or more were 503, the last within {@link OutlierDetector#OVERLOAD_RUN_MILLIS}) and
	 * is not ejected. Lock-free; scans the tracked instances (only when an instance
	 * reaches a threshold with a 503).
	 * @param health the instance that reached a threshold
	 * @param now epoch ms
	 * @return {@code false} when no other instance is shedding load
	 */
	boolean fleetOverloaded(TrackedInstance health, long now) {
		for (TrackedInstance other : this.tracked) {
			if (other != health && !other.key.equals(health.key) && other.ejectedUntil == 0
					&& other.consecutiveOverloaded.get() >= 2
					&& now - other.lastOverloadedAt <= OutlierDetector.OVERLOAD_RUN_MILLIS) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The state of an instance that failed, tracked from now on if it was not.
	 * @param instance the instance
	 * @return its state
	 */
	TrackedInstance track(ServiceInstance instance) {
		synchronized (this.transitions) {
			TrackedInstance[] tracked = this.tracked;
			TrackedInstance found = find(tracked, instance);
			if (found != null) {
				return found;
			}
			if (tracked.length >= OutlierDetector.FORGET_UNLISTED_THRESHOLD) {
				forgetUnlisted();
				tracked = this.tracked;
			}
			if (tracked.length >= OutlierDetector.SWEEP_THRESHOLD) {
				tracked = sweep(tracked);
			}
			TrackedInstance created = new TrackedInstance(InstanceKey.of(instance), instance);
			TrackedInstance[] more = Arrays.copyOf(tracked, tracked.length + 1);
			more[tracked.length] = created;
			this.tracked = more;
			return created;
		}
	}

	/**
	 * Forgets what concerns instances the registry no longer lists: an ejected one no
	 * longer counts towards max-ejection-percent, and tracked ones that are not ejected
	 * are dropped. Under this ejector's lock.
	 * @return the service's current instances (empty when not known)
	 */
	private InstanceSnapshot forgetUnlisted() {
		Supplier<InstanceSnapshot> instances = this.instances;
		if (instances == null) {
			return InstanceSnapshot.EMPTY;
		}
		InstanceSnapshot listed = instances.get();
		if (listed.isEmpty()) {
			return listed;
		}
		for (TrackedInstance h : this.tracked) {
			if (!listed(listed, h.key)) {
				if (this.ejected.get(h.key) == h) {
					forget(h, "it is no longer listed by the registry", true);
				}
				else if (h.ejectedUntil == 0) {
					untrack(h);
				}
			}
		}
		return listed;
	}

	private static boolean listed(InstanceSnapshot listed, InstanceKey key) {
		for (int i = 0; i < listed.size(); i++) {
			if (listed.key(i).equals(key)) {
				return true;
			}
		}
		return false;
	}

	private boolean isTracked(TrackedInstance health) {
		for (TrackedInstance tracked : this.tracked) {
			if (tracked == health) {
				return true;
			}
		}
		return false;
	}

	/** Under this ejector's lock. */
	private void untrack(TrackedInstance health) {
		TrackedInstance[] tracked = this.tracked;
		for (int i = 0; i < tracked.length; i++) {
			if (tracked[i] == health) {
				TrackedInstance[] fewer = new TrackedInstance[tracked.length - 1];
				System.arraycopy(tracked, 0, fewer, 0, i);
				System.arraycopy(tracked, i + 1, fewer, i, tracked.length - i - 1);
				this.tracked = fewer;
				return;
			}
		}
	}

	/**
	 * Ejects an instance that reached a failure threshold, unless max-ejection-percent
	 * forbids it (then only its counts are reset), and starts probing it.
	 * @param health the instance
	 * @param reason {@link OutlierDetector#REASON_5XX},
	 * {@link OutlierDetector#REASON_GATEWAY}, {@link OutlierDetector#REASON_SUCCESS_RATE}
	 * or {@link OutlierDetector#REASON_FAILURE_PERCENTAGE}
	 * @param why what the instance did, for the log lines, e.g. {@code 5 in a row
	 * (consecutive-gateway-failure, last: …)}
	 * @param gone whether the failures prove the instance gone
	 * ({@link Outcome#UNREACHABLE}): when max-ejection-percent allows no more ejections,
	 * it then takes the place of an instance ejected for its answers, which returns to
	 * service at once
	 */
	void eject(TrackedInstance health, String reason, String why, boolean gone) {
		long until;
		synchronized (this.transitions) {
			// rules turned off since the outcome was recorded: they eject nothing
			if (this.detector.isClosed() || health.ejectedUntil != 0 || !this.detector.rules().enabled()) {
				return;
			}
			health.consecutive5xx.set(0);
			health.consecutiveGateway.set(0);
			if (this.ejected.contains(health.key)) {
				// another entry of the same instance (recreated after a concurrent
				// success
				// dropped this one) is ejected already
				return;
			}
			if (!isTracked(health)) {
				TrackedInstance other = find(this.tracked, health.instance);
				if (other != null) {
					// the instance is tracked by a newer entry: its failures count there
					return;
				}
				// dropped by a concurrent success meanwhile: track it again, so that it
				// is
				// shown and found
				TrackedInstance[] more = Arrays.copyOf(this.tracked, this.tracked.length + 1);
				more[more.length - 1] = health;
				this.tracked = more;
			}
			InstanceSnapshot listed = forgetUnlisted();
			Ejections current = this.ejected;
			int instances = Math.max(listed.size(), current.size() + 1);
			int allowed = this.detector.rules().maxEjected(instances);
			if (current.size() >= allowed && gone && makeRoom(health)) {
				current = this.ejected;
			}
			if (current.size() >= allowed) {
				if (log.isDebugEnabled()) {
					log.debug(
							"Service '{}': {} not ejected after {}: {} of {} instances are ejected "
									+ "already (max-ejection-percent {})",
							this.serviceId, health.key, why, current.size(), instances,
							this.detector.rules().maxEjectionPercent());
				}
				return;
			}
			long now = this.clock.millis();
			int times = decayedTimes(health, now) + 1;
			long duration = this.detector.rules().ejectionMillis(times);
			health.timesEjected = times;
			health.ejectedAt = now;
			health.callsSeen = this.detector.traffic();
			health.idleSince = now;
			until = now + duration;
			health.ejectedUntil = until;
			health.ejectedAsGone = gone;
			health.failedProbes = 0;
			health.ejections++;
			this.ejected = current.with(health);
			this.meters.ejected(reason);
			log.info("Service '{}': instance {} ejected for {} ms after {}; ejection #{}, {} of {} instances ejected",
					this.serviceId, health.key, duration, why, times, current.size() + 1, instances);
		}
		this.prober.ejected(health, until);
	}

	/**
	 * Returns to service an instance ejected for its answers (alive), so that one that is
	 * gone can be ejected in its place under max-ejection-percent: a gone instance fails
	 * every request sent to it, an ejected live one would serve some. Under this
	 * ejector's lock.
	 * @param gone the instance that is gone
	 * @return {@code true} when one was returned
	 */
	private boolean makeRoom(TrackedInstance gone) {
		for (TrackedInstance ejected : this.tracked) {
			if (ejected.ejectedUntil != 0 && !ejected.ejectedAsGone && this.ejected.get(ejected.key) == ejected) {
				this.ejected = this.ejected.without(ejected.key);
				ejected.ejectedUntil = 0;
				ejected.returnedAt = this.clock.millis();
				ejected.failedProbes = 0;
				log.info("Service '{}': instance {} returns early: {} is unreachable and takes its place "
						+ "under max-ejection-percent", this.serviceId, ejected.key, gone.key);
				return true;
			}
		}
		return false;
	}

	/**
	 * The multiplier of an instance's next ejection time: times ejected, less one per
	 * base ejection time spent back in service.
	 * @param health the instance
	 * @param now epoch ms
	 * @return {@code >= 0}
	 */
	int decayedTimes(TrackedInstance health, long now) {
		if (health.timesEjected == 0 || health.returnedAt == 0 || health.ejectedUntil != 0) {
			return health.timesEjected;
		}
		long healthyPeriods = Math.max(0, now - health.returnedAt)
				/ this.detector.rules().baseEjectionTime().toMillis();
		return (int) Math.max(0, health.timesEjected - healthyPeriods);
	}

	/**
	 * Whether the registry still lists an instance (for the prober).
	 * @param key the instance
	 * @return {@code true} also when the detector was not told where to look
	 */
	boolean listed(InstanceKey key) {
		Supplier<InstanceSnapshot> instances = this.instances;
		// not told where to look: keep probing
		return instances == null || listed(instances.get(), key);
	}

	/**
	 * Returns an ejected instance whose probe passed. Under this ejector's lock.
	 * @param health the instance as ejected; nothing happens when it no longer is
	 * @param type the probe type that passed, for the log line
	 */
	void bringBack(TrackedInstance health, ProbeType type) {
		synchronized (this.transitions) {
			if (this.ejected.get(health.key) != health) {
				return;
			}
			long now = this.clock.millis();
			health.returnedAt = now;
			health.ejectedUntil = 0;
			health.consecutive5xx.set(0);
			health.consecutiveGateway.set(0);
			int probes = health.failedProbes;
			health.failedProbes = 0;
			this.ejected = this.ejected.without(health.key);
			if (this.ejected.size() == 0) {
				this.panicWarned.set(false);
			}
			log.info("Service '{}': instance {} returns after {} ms ejected ({}{})", this.serviceId, health.key,
					now - health.ejectedAt,
					(type == ProbeType.NONE) ? "ejection time over"
							: type.name().toLowerCase(Locale.ROOT) + " probe passed",
					(probes > 0) ? ", " + probes + " probes failed before" : "");
		}
	}

	/**
	 * Forgets an ejected instance without a probe: it is back in service (and no longer
	 * tracked when unlisted).
	 * @param health the instance as ejected; nothing happens when it no longer is
	 * @param why for the log line
	 * @param unlisted whether the registry no longer lists it
	 */
	void forget(TrackedInstance health, String why, boolean unlisted) {
		synchronized (this.transitions) {
			if (this.ejected.get(health.key) != health) {
				return;
			}
			this.ejected = this.ejected.without(health.key);
			health.ejectedUntil = 0;
			health.returnedAt = this.clock.millis();
			if (unlisted) {
				untrack(health);
			}
			if (this.ejected.size() == 0) {
				this.panicWarned.set(false);
			}
			log.info("Service '{}': instance {} forgotten while ejected: {}", this.serviceId, health.key, why);
		}
	}

	/**
	 * Drops entries that no longer matter (not ejected, no recent failure, no history);
	 * under this ejector's lock.
	 */
	private TrackedInstance[] sweep(TrackedInstance[] tracked) {
		long now = this.clock.millis();
		long horizon = this.detector.rules().maxEjectionTime().toMillis();
		return Arrays.stream(tracked)
			.filter((h) -> h.ejectedUntil != 0 || now - h.lastFailureAt <= horizon || decayedTimes(h, now) > 0)
			.toArray(TrackedInstance[]::new);
	}

}
