package dev.atlas.loadbalancer.outlier;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.LaneHealth;
import dev.atlas.loadbalancer.support.InstanceProbe;
import dev.atlas.loadbalancer.support.Scheduler;
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
 * <li>at most {@code max-ejection-percent} of the service's instances (a true limit) are
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
 * {@value #PROBES_METER}{@code {service,result}},
 * {@value #EJECTED_METER}{@code {service}} and {@value #PANIC_METER}{@code {service}}.
 *
 * <p>
 * This class counts outcomes and holds the rules. Apart from it, as Envoy keeps per-host
 * data apart from the detector: what is kept of each instance ({@link TrackedInstance}),
 * the ejection state and its transitions ({@link Ejector}), the set of ejections a pick
 * reads ({@link Ejections}), the probing ({@link Prober}) and the meters
 * ({@link OutlierMeters}).
 *
 * <p>
 * Thread-safe. Recording an outcome scans the few instances that are failing or were
 * ejected (none for a healthy service) without a lock and allocates nothing; the first
 * failure of an instance, an ejection, a return, and forgetting an instance that
 * recovered take the ejector's lock (never taken on a pick). Time comes from the injected
 * {@link Clock}.
 *
 * @since 0.1.0
 */
public final class OutlierDetector implements AutoCloseable, LaneHealth {

	/** Counter of ejections; tags {@code service}, {@code reason}. */
	public static final String EJECTIONS_METER = "atlas.outlier.ejections";

	/** Gauge of instances ejected now; tags {@code service}. */
	public static final String EJECTED_METER = "atlas.outlier.ejected";

	/**
	 * Counter of requests routed with ejection ignored because their lane was below the
	 * panic threshold; tags {@code service}.
	 */
	public static final String PANIC_METER = "atlas.outlier.panic";

	/**
	 * Counter of probes of ejected instances (TCP or HTTP; not with probe type
	 * {@code none}), by {@code result}: {@value #PROBE_PASSED} (the instance returns) or
	 * {@value #PROBE_FAILED} (ejected one more interval); tags {@code service},
	 * {@code result}.
	 */
	public static final String PROBES_METER = "atlas.outlier.probes";

	/** {@code result} of a probe that passed. */
	public static final String PROBE_PASSED = "passed";

	/** {@code result} of a probe that failed. */
	public static final String PROBE_FAILED = "failed";

	/** Value of the {@code reason} tag for {@code consecutive5xx}. */
	public static final String REASON_5XX = "consecutive-5xx";

	/** Value of the {@code reason} tag for {@code consecutive-gateway-failure}. */
	public static final String REASON_GATEWAY = "consecutive-gateway-failure";

	/** Value of the {@code reason} tag for success-rate detection. */
	public static final String REASON_SUCCESS_RATE = "success-rate";

	/** Value of the {@code reason} tag for failure-percentage detection. */
	public static final String REASON_FAILURE_PERCENTAGE = "failure-percentage";

	/** Entries of instances no longer failing are swept beyond this many. */
	static final int SWEEP_THRESHOLD = 256;

	/**
	 * Beyond this many tracked instances, those the registry no longer lists are dropped
	 * when another one is tracked (e.g. instances that failed during a rolling restart).
	 */
	static final int FORGET_UNLISTED_THRESHOLD = 16;

	/**
	 * How long a run of failures in a row must last, in ms, before 503 answers eject an
	 * instance: 1 s. An instance that sheds load answers 503 at once while the requests
	 * it accepted take their time, so five fast 503s in a row say nothing yet.
	 */
	static final long OVERLOAD_RUN_MILLIS = 1000;

	private static final Logger log = LoggerFactory.getLogger(OutlierDetector.class);

	private final String serviceId;

	/** The rules and the probe they call for, replaced together. */
	private volatile Config config;

	private final Clock clock;

	private final OutlierMeters meters;

	private final Ejector ejector;

	private volatile LongSupplier traffic = () -> -1;

	private volatile boolean closed;

	/** Outcomes per instance in the current detection interval. */
	private final IntervalOutcomes outcomes = new IntervalOutcomes();

	private final ReentrantLock judging = new ReentrantLock();

	/** When the instances are next judged against their peers (epoch ms); 0 before. */
	private volatile long nextJudgement;

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
		this.meters = new OutlierMeters(serviceId, meterRegistry, this);
		this.ejector = new Ejector(this, serviceId, clock, Objects.requireNonNull(scheduler, "scheduler"), this.meters);
	}

	/**
	 * Tells the detector where to read the service's current instances: their number
	 * bounds how many may be ejected, and an ejected instance no longer among them is
	 * forgotten.
	 * @param instances the service's last instance list (e.g. Atlas's stage's
	 * {@code lastSeen}); read on ejections and probes only
	 */
	public void instances(Supplier<InstanceSnapshot> instances) {
		this.ejector.instances(Objects.requireNonNull(instances, "instances"));
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

	@Override
	public boolean isEjected(InstanceKey key) {
		return ejected().contains(key);
	}

	@Override
	public Object ejectionVersion() {
		return ejected();
	}

	@Override
	public boolean panics(InstanceSnapshot lane) {
		Ejections ejected = ejected();
		if (ejected.size() == 0) {
			return false;
		}
		int kept = 0;
		for (int i = 0; i < lane.size(); i++) {
			if (!ejected.contains(lane.key(i))) {
				kept++;
			}
		}
		return kept < lane.size() && rules().panics(kept, lane.size());
	}

	/**
	 * The lane a candidate set was left from by an {@link OutlierEjection} of this
	 * detector: {@link OutlierEjection#laneOf}.
	 */
	@Override
	public @Nullable InstanceSnapshot laneBefore(InstanceSnapshot candidates) {
		return OutlierEjection.laneOf(candidates);
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
		synchronized (this) {
			this.config = next;
			if (rules.enabled()) {
				return;
			}
			int returned = this.ejector.clear();
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
		if (rules.judgesPeers()) {
			countForPeers(instance, outcome, rules);
		}
		Ejector ejector = this.ejector;
		TrackedInstance health = ejector.find(instance);
		if (outcome == Outcome.SUCCESS) {
			if (health != null) {
				ejector.succeeded(health);
			}
			return;
		}
		if (health == null) {
			health = ejector.track(instance);
		}
		if (health.ejectedUntil != 0) {
			return;
		}
		health.instance = instance;
		long now = this.clock.millis();
		health.lastFailureAt = now;
		if (outcome == Outcome.OVERLOADED) {
			health.lastOverloadedAt = now;
			health.consecutiveOverloaded.incrementAndGet();
		}
		else if (health.consecutiveOverloaded.get() != 0) {
			health.consecutiveOverloaded.set(0);
		}
		int errors = health.consecutive5xx.incrementAndGet();
		if (errors == 1) {
			health.runStartedAt = now;
		}
		int gateway;
		if (outcome.isGatewayFailure()) {
			gateway = health.consecutiveGateway.incrementAndGet();
		}
		else {
			health.consecutiveGateway.set(0);
			gateway = 0;
		}
		int gatewayLimit = rules.consecutiveGatewayFailure();
		int errorLimit = rules.consecutive5xx();
		String reason;
		int failures;
		if (gatewayLimit > 0 && gateway >= gatewayLimit) {
			reason = REASON_GATEWAY;
			failures = gateway;
		}
		else if (errorLimit > 0 && errors >= errorLimit) {
			reason = REASON_5XX;
			failures = errors;
		}
		else {
			return;
		}
		long runStarted = health.runStartedAt;
		if (outcome == Outcome.OVERLOADED && (runStarted == 0 || now - runStarted < OVERLOAD_RUN_MILLIS)) {
			// Fast 503s while its requests in flight have not answered yet: an instance
			// that sheds load answers 503 at once and succeeds later. Counting goes on.
			return;
		}
		if (outcome == Outcome.OVERLOADED && ejector.fleetOverloaded(health, now)) {
			// Alive and refusing as the others do: the fleet is short of capacity, and
			// ejecting this instance would only overload the rest.
			health.consecutive5xx.set(0);
			health.consecutiveGateway.set(0);
			health.runStartedAt = 0;
			if (log.isDebugEnabled()) {
				log.debug(
						"Service '{}': instance {} not ejected after {}: at least half of the other instances "
								+ "answered 503 too within the interval (the fleet is overloaded as a whole)",
						this.serviceId, health.key, inARow(failures, reason, cause));
			}
			return;
		}
		ejector.eject(health, reason, inARow(failures, reason, cause), outcome == Outcome.UNREACHABLE);
	}

	private static String inARow(int failures, String reason, @Nullable Object cause) {
		return failures + " in a row (" + reason + ((cause != null) ? ", last: " + cause : "") + ')';
	}

	/**
	 * Counts an outcome for success-rate and failure-percentage detection and, once per
	 * interval, judges every instance counted against its peers (on the calling thread;
	 * one caller at a time, the others go on).
	 */
	private void countForPeers(ServiceInstance instance, Outcome outcome, OutlierRules rules) {
		this.outcomes.record(instance, outcome != Outcome.SUCCESS);
		long now = this.clock.millis();
		long due = this.nextJudgement;
		if (due == 0) {
			this.nextJudgement = now + rules.interval().toMillis();
		}
		else if (now >= due && this.judging.tryLock()) {
			try {
				long intervalStart = this.nextJudgement - rules.interval().toMillis();
				if (now >= this.nextJudgement) {
					this.nextJudgement = now + rules.interval().toMillis();
					List<PeerJudgement.Counted> counted = this.outcomes.drain();
					// Counts gathered over much longer than an interval (the service was
					// idle in between) are not one interval's: dropped, not judged.
					boolean stale = now - intervalStart > 2 * rules.interval().toMillis();
					for (PeerJudgement.Verdict verdict : stale ? List.<PeerJudgement.Verdict>of() : PeerJudgement
						.judge(counted, rules, Duration.ofMillis(now - intervalStart), ThreadLocalRandom.current())) {
						Ejector ejector = this.ejector;
						TrackedInstance health = ejector.find(verdict.instance());
						ejector.eject((health != null) ? health : ejector.track(verdict.instance()), verdict.reason(),
								verdict.why(), false);
					}
				}
			}
			finally {
				this.judging.unlock();
			}
		}
	}

	/**
	 * The service's request count (for the prober).
	 * @return a monotonic count, {@code -1} when unknown
	 */
	long traffic() {
		return this.traffic.getAsLong();
	}

	/**
	 * The rules in force and their probe, as one pair (for the prober).
	 * @return the configuration in force
	 */
	Config config() {
		return this.config;
	}

	/**
	 * The service's outlier meters (for the prober).
	 * @return the meters
	 */
	OutlierMeters meters() {
		return this.meters;
	}

	/**
	 * Whether the detector is closed: probing stops.
	 * @return {@code true} after {@link #close()}
	 */
	boolean isClosed() {
		return this.closed;
	}

	/**
	 * The instances ejected now, for {@link OutlierEjection}.
	 * @return an immutable view, the same object until an ejection or return
	 */
	Ejections ejected() {
		return this.ejector.ejected();
	}

	/**
	 * Counts a request routed in panic mode, and says so once per episode (until no
	 * instance is ejected any more).
	 * @param usable instances of the lane left after ejection
	 * @param lane instances of the lane
	 */
	void panicked(int usable, int lane) {
		this.meters.panicked();
		if (this.ejector.panicStarts()) {
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
		for (TrackedInstance h : this.ejector.tracked()) {
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
		TrackedInstance h = this.ejector.find(instance);
		if (h == null) {
			return null;
		}
		return view(h, this.clock.millis());
	}

	private InstanceHealth view(TrackedInstance h, long now) {
		long until = h.ejectedUntil;
		return new InstanceHealth(h.key, until != 0, (until != 0) ? h.ejectedAt : 0, until,
				this.ejector.decayedTimes(h, now), h.consecutive5xx.get(), h.consecutiveGateway.get());
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

	/**
	 * The rules in force and the probe they call for.
	 *
	 * @param rules the rules
	 * @param probe the probe
	 */
	record Config(OutlierRules rules, InstanceProbe probe) {
	}

}
