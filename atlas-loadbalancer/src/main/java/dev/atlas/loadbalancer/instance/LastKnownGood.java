package dev.atlas.loadbalancer.instance;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import dev.atlas.loadbalancer.support.InstanceProbe;
import dev.atlas.loadbalancer.support.Scheduler;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Last-known-good instance list: an empty answer from the registry (an outage, a
 * restarted registry node, a failed query) does not wipe a service's instances. The
 * previous non-empty list keeps being used, marked stale (counted in
 * {@code atlas.registry.stale{service}} once per empty refresh, one WARN per episode),
 * until a non-empty answer comes back — or until the empty answers have lasted longer
 * than the stale limit, after which an empty list is accepted, so a real scale to zero is
 * honoured.
 *
 * <p>
 * <strong>It never revives the dead.</strong>
 * <ul>
 * <li>An empty answer that the registry's own live view confirms ({@link #confirmEmpty}:
 * e.g. the nodes a ZooKeeper watch holds, which a deletion updates and an outage does
 * not) is the truth and is accepted at once: the service's last instance deregistered, or
 * it was scaled to zero. Asked once per new empty answer (at most once a second for the
 * same answer object), never per request.</li>
 * <li>A stale list is connect-checked (with a {@link StaleCheck}): as soon as it becomes
 * stale and again every check interval while it stays so, each of its instances is probed
 * off the request path (one task per instance), and those that do not accept a connection
 * are left out until the next check (all of them: the empty answer is used). Until the
 * first check has run (refused connections answer at once; an unreachable host takes up
 * to the connect timeout) the whole list is used.</li>
 * </ul>
 *
 * <p>
 * Thread-safe and lock-free: returns the same list object while nothing changes, so
 * downstream memoization holds.
 *
 * @since 0.1.0
 */
public final class LastKnownGood {

	/**
	 * Counter of empty refreshes answered with the last known good list; tags
	 * {@code service}.
	 */
	public static final String STALE_METER = "atlas.registry.stale";

	/** The same empty answer object is confirmed again at most this often. */
	static final long CONFIRM_INTERVAL_MILLIS = 1_000;

	private static final Logger log = LoggerFactory.getLogger(LastKnownGood.class);

	private final String serviceId;

	private final Duration staleLimit;

	private final Clock clock;

	private final Counter stale;

	private volatile @Nullable List<ServiceInstance> lastGood;

	private volatile @Nullable List<ServiceInstance> lastEmpty;

	private volatile long emptySince = -1;

	private volatile @Nullable StaleCheck check;

	private final AtomicBoolean checking = new AtomicBoolean();

	private volatile @Nullable Checked checked;

	private volatile BooleanSupplier confirmsEmpty = () -> false;

	/** When the registry's view was last asked to confirm an empty answer. */
	private volatile long confirmedAt;

	/**
	 * Creates the guard of one service.
	 * @param serviceId the service
	 * @param staleLimit how long empty answers are overridden, not negative
	 * ({@link Duration#ZERO} accepts empty lists at once)
	 * @param clock measures the stale period
	 * @param meterRegistry where {@value #STALE_METER} is registered
	 */
	public LastKnownGood(String serviceId, Duration staleLimit, Clock clock, MeterRegistry meterRegistry) {
		this(serviceId, staleLimit, clock, meterRegistry, null);
	}

	/**
	 * Creates the guard of one service, with a connect check of stale lists.
	 * @param serviceId the service
	 * @param staleLimit how long empty answers are overridden, not negative
	 * ({@link Duration#ZERO} accepts empty lists at once)
	 * @param clock measures the stale period
	 * @param meterRegistry where {@value #STALE_METER} is registered
	 * @param check how a stale list is checked, or {@code null} for no check
	 */
	public LastKnownGood(String serviceId, Duration staleLimit, Clock clock, MeterRegistry meterRegistry,
			@Nullable StaleCheck check) {
		this.check = check;
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		if (staleLimit.isNegative()) {
			throw new IllegalArgumentException("staleLimit must not be negative, was " + staleLimit);
		}
		this.staleLimit = staleLimit;
		this.clock = Objects.requireNonNull(clock, "clock");
		this.stale = Counter.builder(STALE_METER)
			.description("Empty registry answers replaced by the last known good instance list")
			.tag("service", serviceId)
			.register(meterRegistry);
	}

	/**
	 * Changes how stale lists are checked (a runtime change of the probe's timeout or
	 * interval); a check under way finishes with the previous one.
	 * @param check the new check; {@code null} for none
	 */
	public void staleCheck(@Nullable StaleCheck check) {
		this.check = check;
	}

	/**
	 * Tells how to ask the registry's own live view whether the service really has no
	 * instance (e.g. a ZooKeeper watch's cache: a deletion updates it, a lost connection
	 * does not). Without it, every empty answer keeps the last known good list.
	 * @param confirmsEmpty {@code true} when the registry's view holds no instance of the
	 * service; called on the request path, once per new empty answer (at most once a
	 * second for the same answer object); must be quick, thread-safe and must not throw
	 */
	public void confirmEmpty(BooleanSupplier confirmsEmpty) {
		this.confirmsEmpty = Objects.requireNonNull(confirmsEmpty, "confirmsEmpty");
	}

	/**
	 * The list to use for a registry answer.
	 * @param answer as emitted by the supplier below (discovery + cache); not
	 * {@code null}
	 * @return {@code answer} when it is non-empty, when the registry's live view confirms
	 * it ({@link #confirmEmpty}), or when the stale limit has passed; else the last
	 * non-empty answer, less the instances its last connect check found refusing
	 * connections
	 */
	public List<ServiceInstance> apply(List<ServiceInstance> answer) {
		if (!answer.isEmpty()) {
			if (this.emptySince >= 0) {
				log.info("Service '{}': the registry lists {} instances again; stale list dropped", this.serviceId,
						answer.size());
				this.emptySince = -1;
				this.checked = null;
				// the next episode counts its empty answers again, even the same object
				this.lastEmpty = null;
			}
			if (this.lastGood != answer) {
				this.lastGood = answer;
			}
			return answer;
		}
		List<ServiceInstance> good = this.lastGood;
		if (good == null) {
			return answer;
		}
		long now = this.clock.millis();
		if ((this.lastEmpty != answer || now - this.confirmedAt >= CONFIRM_INTERVAL_MILLIS) && confirmed(now)) {
			this.lastGood = null;
			this.emptySince = -1;
			this.checked = null;
			log.info("Service '{}': the registry lists no instance any more, as its own live view confirms; the {} "
					+ "instances known before are gone", this.serviceId, good.size());
			return answer;
		}
		if (this.emptySince < 0) {
			this.emptySince = now;
			log.warn("Service '{}': the registry answered no instance; keeping the last {} known for up to {} ms{}",
					this.serviceId, good.size(), this.staleLimit.toMillis(),
					(this.check != null) ? ", less those that refuse connections" : "");
		}
		if (now - this.emptySince >= this.staleLimit.toMillis()) {
			if (this.lastGood != null) {
				log.warn("Service '{}': still no instance after {} ms; accepting the empty list", this.serviceId,
						this.staleLimit.toMillis());
				this.lastGood = null;
				this.checked = null;
			}
			return answer;
		}
		if (this.lastEmpty != answer) {
			this.lastEmpty = answer;
			this.stale.increment();
		}
		StaleCheck check = this.check;
		return (check != null) ? checked(good, answer, now, check) : good;
	}

	private boolean confirmed(long now) {
		this.confirmedAt = now;
		try {
			return this.confirmsEmpty.getAsBoolean();
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** The stale list less the instances refusing connections, as last checked. */
	private List<ServiceInstance> checked(List<ServiceInstance> good, List<ServiceInstance> empty, long now,
			StaleCheck check) {
		Checked last = this.checked;
		if (last == null || last.source != good || now - last.at >= check.interval().toMillis()) {
			startCheck(good, check);
		}
		if (last == null || last.source != good) {
			return good;
		}
		return last.usable.isEmpty() ? empty : last.usable;
	}

	private void startCheck(List<ServiceInstance> good, StaleCheck check) {
		if (this.checking.get() || !this.checking.compareAndSet(false, true)) {
			return;
		}
		// One task per instance: an unreachable one holds a probe thread for one connect
		// timeout, not the whole check.
		int size = good.size();
		boolean[] answers = new boolean[size];
		AtomicInteger left = new AtomicInteger(size);
		for (int i = 0; i < size; i++) {
			int index = i;
			check.scheduler().schedule(() -> {
				try {
					answers[index] = check.probe().probe(good.get(index));
				}
				finally {
					// the last task to finish sees every answer (decrementAndGet orders
					// them)
					if (left.decrementAndGet() == 0) {
						checked(good, answers);
					}
				}
			}, 0);
		}
	}

	private void checked(List<ServiceInstance> good, boolean[] answers) {
		try {
			List<ServiceInstance> usable = new ArrayList<>(good.size());
			for (int i = 0; i < answers.length; i++) {
				if (answers[i]) {
					usable.add(good.get(i));
				}
			}
			List<ServiceInstance> result = (usable.size() == good.size()) ? good : List.copyOf(usable);
			Checked previous = this.checked;
			if (result != good && (previous == null || previous.usable.size() != result.size())) {
				log.warn("Service '{}': {} of the {} instances of the stale list refuse connections and are left out",
						this.serviceId, good.size() - result.size(), good.size());
			}
			if (this.lastGood == good) {
				this.checked = new Checked(good, result, this.clock.millis());
			}
		}
		finally {
			this.checking.set(false);
		}
	}

	/**
	 * Whether the last answer was replaced by the last known good list.
	 * @return {@code true} while stale
	 */
	public boolean isStale() {
		return this.emptySince >= 0 && this.lastGood != null;
	}

	/**
	 * How a stale list is checked: each instance is probed (a TCP connect), off the
	 * request path.
	 *
	 * @param probe the probe; an instance it fails is left out
	 * @param scheduler runs the check
	 * @param interval how often the check runs again while the list stays stale,
	 * {@code > 0}
	 */
	public record StaleCheck(InstanceProbe probe, Scheduler scheduler, Duration interval) {

		/**
		 * Validates.
		 * @throws IllegalArgumentException if the interval is not positive
		 */
		public StaleCheck {
			Objects.requireNonNull(probe, "probe");
			Objects.requireNonNull(scheduler, "scheduler");
			if (interval.toMillis() < 1) {
				throw new IllegalArgumentException("interval must be at least 1ms, was " + interval);
			}
		}

	}

	private record Checked(List<ServiceInstance> source, List<ServiceInstance> usable, long at) {
	}

}
