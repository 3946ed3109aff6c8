package dev.atlas.loadbalancer.outlier;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.support.InstanceProbe;
import dev.atlas.loadbalancer.support.Scheduler;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Passive outlier detection of one service, as one caller sees it, after Envoy's:
 * <ul>
 * <li>each completed request is {@link #record recorded} as an {@link Outcome}; an
 * instance with {@code consecutive-gateway-failure} gateway failures or
 * {@code consecutive5xx} 5xx answers in a row (gateway failures included) is
 * <em>ejected</em>; any success resets both counts;</li>
 * <li>the n-th ejection of an instance lasts {@code base-ejection-time × n}, capped at
 * {@code max-ejection-time}; n decreases by one for each base ejection time the instance
 * has spent back in service without being ejected, so an instance that fails again soon
 * after it returned is ejected for longer;</li>
 * <li>at most {@code max-ejection-percent} of the service's instances (at least one) are
 * ejected at once; a failure threshold reached beyond that ejects nothing and resets the
 * instance's counts;</li>
 * <li>once its ejection time is over, an ejected instance is probed
 * ({@link InstanceProbe} on the {@link Scheduler}, every probe interval with 10 % jitter)
 * and returns at the first probe that passes (with probe type {@code none}: at once); an
 * instance that leaves the registry while ejected is forgotten, and nothing is probed for
 * it any more.</li>
 * </ul>
 * {@link OutlierEjection}, a candidate filter, leaves the ejected instances out of each
 * request's candidates, unless the panic threshold says otherwise. One INFO line per
 * ejection and per return; meters {@value #EJECTIONS_METER}{@code {service,reason}},
 * {@value #EJECTED_METER}{@code {service}} and {@value #PANIC_METER}{@code {service}}.
 *
 * <p>
 * Thread-safe. Recording an outcome scans the few instances that are failing or were
 * ejected (none for a healthy service) without a lock and allocates nothing; the first
 * failure of an instance, an ejection, a return, and forgetting an instance that
 * recovered take a lock of this detector (never taken on a pick). Time comes from the
 * injected {@link Clock}.
 *
 * @since 0.1.0
 */
public final class OutlierDetector implements AutoCloseable {

	/** Counter of ejections; tags {@code service}, {@code reason}. */
	public static final String EJECTIONS_METER = "atlas.outlier.ejections";

	/** Gauge of instances ejected now; tags {@code service}. */
	public static final String EJECTED_METER = "atlas.outlier.ejected";

	/**
	 * Counter of requests routed with ejection ignored because their lane was below the
	 * panic threshold; tags {@code service}.
	 */
	public static final String PANIC_METER = "atlas.outlier.panic";

	/** Value of the {@code reason} tag for {@code consecutive5xx}. */
	public static final String REASON_5XX = "consecutive-5xx";

	/** Value of the {@code reason} tag for {@code consecutive-gateway-failure}. */
	public static final String REASON_GATEWAY = "consecutive-gateway-failure";

	/** Entries of instances no longer failing are swept beyond this many. */
	static final int SWEEP_THRESHOLD = 256;

	/**
	 * Beyond this many tracked instances, those the registry no longer lists are dropped
	 * when another one is tracked (e.g. instances that failed during a rolling restart).
	 */
	static final int FORGET_UNLISTED_THRESHOLD = 16;

	private static final Logger log = LoggerFactory.getLogger(OutlierDetector.class);

	private static final Health[] NONE_TRACKED = {};

	private final String serviceId;

	/** The rules and the probe they call for, replaced together. */
	private volatile Config config;

	private final Clock clock;

	private final Scheduler scheduler;

	private final Counter ejections5xx;

	private final Counter ejectionsGateway;

	private final Counter panic;

	/**
	 * Instances with a failure count, an ejection, or an ejection history: few (a healthy
	 * service has none), so an array replaced as a whole under {@link #transitions} and
	 * scanned without a lock or an allocation.
	 */
	private volatile Health[] tracked = NONE_TRACKED;

	private final Object transitions = new Object();

	private final AtomicBoolean panicWarned = new AtomicBoolean();

	private volatile Ejected ejected = Ejected.NONE;

	private volatile @Nullable Supplier<InstanceSnapshot> instances;

	private volatile LongSupplier traffic = () -> -1;

	private volatile boolean closed;

	/**
	 * Creates the detector of one service.
	 * @param serviceId the service
	 * @param rules the thresholds; {@link OutlierRules#OFF} records nothing and ejects
	 * nothing
	 * @param clock the time of ejections and returns
	 * @param probe checks an ejected instance before it returns
	 * @param scheduler runs the probes
	 * @param meterRegistry where the meters are registered
	 */
	public OutlierDetector(String serviceId, OutlierRules rules, Clock clock, InstanceProbe probe, Scheduler scheduler,
			MeterRegistry meterRegistry) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.config = new Config(Objects.requireNonNull(rules, "rules"), Objects.requireNonNull(probe, "probe"));
		this.clock = Objects.requireNonNull(clock, "clock");
		this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
		this.ejections5xx = ejectionCounter(meterRegistry, REASON_5XX);
		this.ejectionsGateway = ejectionCounter(meterRegistry, REASON_GATEWAY);
		this.panic = Counter.builder(PANIC_METER)
			.description("Requests routed with outlier ejection ignored: their lane was below the panic threshold")
			.tag("service", serviceId)
			.register(meterRegistry);
		Gauge.builder(EJECTED_METER, this, (detector) -> detector.ejected.size())
			.description("Instances of the service ejected as outliers now")
			.tag("service", serviceId)
			.register(meterRegistry);
	}

	private Counter ejectionCounter(MeterRegistry meterRegistry, String reason) {
		return Counter.builder(EJECTIONS_METER)
			.description("Instances ejected as outliers")
			.tag("service", this.serviceId)
			.tag("reason", reason)
			.register(meterRegistry);
	}

	/**
	 * Tells the detector where to read the service's current instances: their number
	 * bounds how many may be ejected, and an ejected instance no longer among them is
	 * forgotten.
	 * @param instances the service's last instance list (e.g. Atlas's stage's
	 * {@code lastSeen}); read on ejections and probes only
	 */
	public void instances(Supplier<InstanceSnapshot> instances) {
		this.instances = Objects.requireNonNull(instances, "instances");
	}

	/**
	 * Tells the detector how to see whether the service is still called: probing stops
	 * (and the instance is no longer ejected) once the service has had no request for
	 * {@code max-ejection-time} while the instance was being probed.
	 * @param totalRequests requests sent to the service so far, any monotonic count (e.g.
	 * {@code InstanceStats::totalRequests}); read on probes only
	 */
	public void traffic(LongSupplier totalRequests) {
		this.traffic = Objects.requireNonNull(totalRequests, "totalRequests");
	}

	/**
	 * The rules in force.
	 * @return the rules
	 */
	public OutlierRules rules() {
		return this.config.rules();
	}

	/**
	 * Puts new rules in force (a runtime change of configuration). What the detector
	 * knows is kept: failure counts, ejections and their history. New thresholds apply
	 * from the next outcome, a new ejection time from the next ejection, a new probe from
	 * the next probe; instances ejected now stay out until their ejection ends (a lower
	 * {@code max-ejection-percent} does not return any). Rules that turn detection off
	 * return every ejected instance at once and forget every count.
	 * @param rules the new rules
	 * @param probe checks an ejected instance, as the new rules' probe settings say
	 */
	public void update(OutlierRules rules, InstanceProbe probe) {
		Config next = new Config(Objects.requireNonNull(rules, "rules"), Objects.requireNonNull(probe, "probe"));
		synchronized (this.transitions) {
			this.config = next;
			if (rules.enabled()) {
				return;
			}
			int returned = this.ejected.size();
			this.ejected = Ejected.NONE;
			this.tracked = NONE_TRACKED;
			this.panicWarned.set(false);
			if (returned > 0) {
				log.info("Service '{}': outlier detection turned off; {} ejected instance(s) back in service",
						this.serviceId, returned);
			}
		}
	}

	/**
	 * Records the outcome of one request (each attempt of a retried request counts).
	 * Outcomes of an instance while it is ejected (requests that were in flight) change
	 * nothing.
	 * @param instance the instance the request went to
	 * @param outcome what came of it
	 * @param cause the failure, for the log line of an ejection; may be {@code null}
	 */
	public void record(ServiceInstance instance, Outcome outcome, @Nullable Object cause) {
		OutlierRules rules = this.config.rules();
		if (!rules.enabled() || outcome == Outcome.IGNORED || this.closed) {
			return;
		}
		Health[] tracked = this.tracked;
		Health health = find(tracked, instance);
		if (outcome == Outcome.SUCCESS) {
			if (health != null) {
				succeeded(health);
			}
			return;
		}
		if (health == null) {
			health = track(instance);
		}
		if (health.ejectedUntil != 0) {
			return;
		}
		health.instance = instance;
		health.lastFailureAt = this.clock.millis();
		int errors = health.consecutive5xx.incrementAndGet();
		int gateway;
		if (outcome == Outcome.GATEWAY_FAILURE) {
			gateway = health.consecutiveGateway.incrementAndGet();
		}
		else {
			health.consecutiveGateway.set(0);
			gateway = 0;
		}
		int gatewayLimit = rules.consecutiveGatewayFailure();
		int errorLimit = rules.consecutive5xx();
		if (gatewayLimit > 0 && gateway >= gatewayLimit) {
			eject(health, REASON_GATEWAY, gateway, cause);
		}
		else if (errorLimit > 0 && errors >= errorLimit) {
			eject(health, REASON_5XX, errors, cause);
		}
	}

	private static @Nullable Health find(Health[] tracked, ServiceInstance instance) {
		for (Health health : tracked) {
			if (health.key.matches(instance)) {
				return health;
			}
		}
		return null;
	}

	/**
	 * A success: resets the counts; an instance with nothing left to remember is dropped.
	 */
	private void succeeded(Health health) {
		if (health.consecutive5xx.get() != 0) {
			health.consecutive5xx.set(0);
		}
		if (health.consecutiveGateway.get() != 0) {
			health.consecutiveGateway.set(0);
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

	private Health track(ServiceInstance instance) {
		synchronized (this.transitions) {
			Health[] tracked = this.tracked;
			Health found = find(tracked, instance);
			if (found != null) {
				return found;
			}
			if (tracked.length >= FORGET_UNLISTED_THRESHOLD) {
				forgetUnlisted();
				tracked = this.tracked;
			}
			if (tracked.length >= SWEEP_THRESHOLD) {
				tracked = sweep(tracked);
			}
			Health created = new Health(InstanceKey.of(instance), instance);
			Health[] more = Arrays.copyOf(tracked, tracked.length + 1);
			more[tracked.length] = created;
			this.tracked = more;
			return created;
		}
	}

	/**
	 * Forgets what concerns instances the registry no longer lists: an ejected one no
	 * longer counts towards max-ejection-percent, and tracked ones that are not ejected
	 * are dropped. Under {@link #transitions}.
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
		for (Health h : this.tracked) {
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

	private boolean isTracked(Health health) {
		for (Health tracked : this.tracked) {
			if (tracked == health) {
				return true;
			}
		}
		return false;
	}

	/** Under {@link #transitions}. */
	private void untrack(Health health) {
		Health[] tracked = this.tracked;
		for (int i = 0; i < tracked.length; i++) {
			if (tracked[i] == health) {
				Health[] fewer = new Health[tracked.length - 1];
				System.arraycopy(tracked, 0, fewer, 0, i);
				System.arraycopy(tracked, i + 1, fewer, i, tracked.length - i - 1);
				this.tracked = fewer;
				return;
			}
		}
	}

	private void eject(Health health, String reason, int failures, @Nullable Object cause) {
		long until;
		synchronized (this.transitions) {
			// rules turned off since the outcome was recorded: they eject nothing
			if (this.closed || health.ejectedUntil != 0 || !rules().enabled()) {
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
				Health other = find(this.tracked, health.instance);
				if (other != null) {
					// the instance is tracked by a newer entry: its failures count there
					return;
				}
				// dropped by a concurrent success meanwhile: track it again, so that it
				// is
				// shown and found
				Health[] more = Arrays.copyOf(this.tracked, this.tracked.length + 1);
				more[more.length - 1] = health;
				this.tracked = more;
			}
			InstanceSnapshot listed = forgetUnlisted();
			Ejected current = this.ejected;
			int instances = Math.max(listed.size(), current.size() + 1);
			int allowed = rules().maxEjected(instances);
			if (current.size() >= allowed) {
				if (log.isDebugEnabled()) {
					log.debug(
							"Service '{}': {} not ejected after {} ({} in a row): {} of {} instances are ejected "
									+ "already (max-ejection-percent {})",
							this.serviceId, health.key, reason, failures, current.size(), instances,
							rules().maxEjectionPercent());
				}
				return;
			}
			long now = this.clock.millis();
			int times = decayedTimes(health, now) + 1;
			long duration = rules().ejectionMillis(times);
			health.timesEjected = times;
			health.ejectedAt = now;
			health.callsSeen = this.traffic.getAsLong();
			health.idleSince = now;
			until = now + duration;
			health.ejectedUntil = until;
			this.ejected = current.with(health);
			(REASON_5XX.equals(reason) ? this.ejections5xx : this.ejectionsGateway).increment();
			log.info(
					"Service '{}': instance {} ejected for {} ms after {} in a row ({}{}); ejection #{}, {} of {} "
							+ "instances ejected",
					this.serviceId, health.key, duration, failures, reason, (cause != null) ? ", last: " + cause : "",
					times, current.size() + 1, instances);
		}
		scheduleProbe(health, until - this.clock.millis() + jitter());
	}

	private int decayedTimes(Health health, long now) {
		if (health.timesEjected == 0 || health.returnedAt == 0 || health.ejectedUntil != 0) {
			return health.timesEjected;
		}
		long healthyPeriods = Math.max(0, now - health.returnedAt) / rules().baseEjectionTime().toMillis();
		return (int) Math.max(0, health.timesEjected - healthyPeriods);
	}

	private long jitter() {
		long interval = rules().probe().interval().toMillis();
		return ThreadLocalRandom.current().nextLong(interval / 10 + 1);
	}

	private void scheduleProbe(Health health, long delayMillis) {
		if (!this.closed) {
			this.scheduler.schedule(() -> probe(health), Math.max(0, delayMillis));
		}
	}

	/**
	 * One probe of an ejected instance, run on the scheduler: too early, it waits for the
	 * end of the ejection; then it returns the instance when the probe passes, else tries
	 * again one interval (± 10 %) later.
	 */
	void probe(Health health) {
		if (this.closed || this.ejected.get(health.key) != health) {
			return;
		}
		long now = this.clock.millis();
		if (now < health.ejectedUntil) {
			scheduleProbe(health, health.ejectedUntil - now + jitter());
			return;
		}
		if (!listed(health.key)) {
			forget(health, "it is no longer listed by the registry", true);
			return;
		}
		long calls = this.traffic.getAsLong();
		if (calls != health.callsSeen) {
			health.callsSeen = calls;
			health.idleSince = now;
		}
		else if (now - health.idleSince >= rules().maxEjectionTime().toMillis()) {
			forget(health, "the service has not been called for " + (now - health.idleSince)
					+ " ms; probing stops and the next request may choose it", false);
			return;
		}
		Config config = this.config;
		ProbeType type = config.rules().probe().type();
		boolean passed = type == ProbeType.NONE || config.probe().probe(health.instance);
		if (passed) {
			bringBack(health, type);
		}
		else {
			health.failedProbes++;
			long interval = config.rules().probe().interval().toMillis();
			scheduleProbe(health, interval - interval / 10 + 2 * jitter());
		}
	}

	private boolean listed(InstanceKey key) {
		Supplier<InstanceSnapshot> instances = this.instances;
		// not told where to look: keep probing
		return instances == null || listed(instances.get(), key);
	}

	private void bringBack(Health health, ProbeType type) {
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

	private void forget(Health health, String why, boolean unlisted) {
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
	 * under {@link #transitions}.
	 */
	private Health[] sweep(Health[] tracked) {
		long now = this.clock.millis();
		long horizon = rules().maxEjectionTime().toMillis();
		return Arrays.stream(tracked)
			.filter((h) -> h.ejectedUntil != 0 || now - h.lastFailureAt <= horizon || decayedTimes(h, now) > 0)
			.toArray(Health[]::new);
	}

	/**
	 * The instances ejected now, for {@link OutlierEjection}.
	 * @return an immutable view, the same object until an ejection or return
	 */
	Ejected ejected() {
		return this.ejected;
	}

	/**
	 * Counts a request routed in panic mode, and says so once per episode (until no
	 * instance is ejected any more).
	 * @param usable instances of the lane left after ejection
	 * @param lane instances of the lane
	 */
	void panicked(int usable, int lane) {
		this.panic.increment();
		if (!this.panicWarned.get() && this.panicWarned.compareAndSet(false, true)) {
			log.warn(
					"Service '{}': only {} of {} instances of a lane would remain after outlier ejection, below "
							+ "the panic threshold of {} %: ejection is ignored for that lane while this lasts",
					this.serviceId, usable, lane, rules().panicThresholdPercent());
		}
	}

	/**
	 * What outlier detection knows of each instance with a failure count, an ejection or
	 * an ejection history, for the actuator view.
	 * @return a new list, ejected instances first, then by key
	 */
	public List<InstanceHealth> health() {
		long now = this.clock.millis();
		List<InstanceHealth> result = new ArrayList<>();
		for (Health h : this.tracked) {
			result.add(view(h, now));
		}
		result.sort(Comparator.comparing(InstanceHealth::ejected)
			.reversed()
			.thenComparing(InstanceHealth::key, InstanceKey.ORDER));
		return result;
	}

	/**
	 * What outlier detection knows of one instance.
	 * @param instance an instance
	 * @return its state, or {@code null} when it has no failure count, ejection nor
	 * history
	 */
	public @Nullable InstanceHealth health(ServiceInstance instance) {
		Health h = find(this.tracked, instance);
		if (h == null) {
			return null;
		}
		return view(h, this.clock.millis());
	}

	private InstanceHealth view(Health h, long now) {
		long until = h.ejectedUntil;
		return new InstanceHealth(h.key, until != 0, (until != 0) ? h.ejectedAt : 0, until, decayedTimes(h, now),
				h.consecutive5xx.get(), h.consecutiveGateway.get());
	}

	/** Stops probing; later outcomes are ignored. Idempotent. */
	@Override
	public void close() {
		this.closed = true;
	}

	/**
	 * One instance as outlier detection sees it.
	 *
	 * @param key the instance
	 * @param ejected whether it is ejected now
	 * @param ejectedAt when the current ejection began, epoch ms; 0 when not ejected
	 * @param ejectedUntil when the current ejection time ends, epoch ms (it returns at
	 * the first probe that passes from then on); 0 when not ejected
	 * @param timesEjected the multiplier of its next (or current) ejection time: times
	 * ejected, less one per base ejection time spent back in service
	 * @param consecutive5xx 5xx answers and gateway failures in a row
	 * @param consecutiveGatewayFailures gateway failures in a row
	 */
	public record InstanceHealth(InstanceKey key, boolean ejected, long ejectedAt, long ejectedUntil, int timesEjected,
			int consecutive5xx, int consecutiveGatewayFailures) {
	}

	/** The mutable state of one instance. */
	static final class Health {

		final InstanceKey key;

		final AtomicInteger consecutive5xx = new AtomicInteger();

		final AtomicInteger consecutiveGateway = new AtomicInteger();

		/**
		 * The last object the instance was seen as (probed by its host, port, scheme).
		 */
		volatile ServiceInstance instance;

		volatile long lastFailureAt;

		// Written under the detector's lock; read without it.
		volatile long ejectedAt;

		volatile long ejectedUntil;

		volatile long returnedAt;

		volatile int timesEjected;

		volatile int failedProbes;

		// Read and written by the probe chain only (one at a time per instance).
		long callsSeen;

		long idleSince;

		Health(InstanceKey key, ServiceInstance instance) {
			this.key = key;
			this.instance = instance;
		}

	}

	/** The instances ejected at one moment: immutable, replaced as a whole. */
	static final class Ejected {

		static final Ejected NONE = new Ejected(Map.of());

		private final Map<InstanceKey, Health> byKey;

		private Ejected(Map<InstanceKey, Health> byKey) {
			this.byKey = byKey;
		}

		int size() {
			return this.byKey.size();
		}

		boolean contains(InstanceKey key) {
			return this.byKey.containsKey(key);
		}

		@Nullable Health get(InstanceKey key) {
			return this.byKey.get(key);
		}

		Ejected with(Health health) {
			Map<InstanceKey, Health> more = new HashMap<>(this.byKey);
			more.put(health.key, health);
			return new Ejected(Collections.unmodifiableMap(more));
		}

		Ejected without(InstanceKey key) {
			Map<InstanceKey, Health> fewer = new HashMap<>(this.byKey);
			fewer.remove(key);
			return fewer.isEmpty() ? NONE : new Ejected(Collections.unmodifiableMap(fewer));
		}

	}

	/**
	 * The rules in force and the probe they call for.
	 *
	 * @param rules the rules
	 * @param probe the probe
	 */
	private record Config(OutlierRules rules, InstanceProbe probe) {
	}

}
