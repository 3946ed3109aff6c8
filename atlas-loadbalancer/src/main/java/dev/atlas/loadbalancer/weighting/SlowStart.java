package dev.atlas.loadbalancer.weighting;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.InstanceAttributes;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.core.Ordered;

/**
 * Slow start (warmup): gives young instances a reduced effective weight that ramps up
 * over {@link WarmupRules#duration()} ({@link WarmupRules#factor(long)}), so a cold JVM
 * is not handed its full share at once.
 *
 * <p>
 * An instance is recognised across refreshes by its {@link InstanceKey} (id, host and
 * port), so an instance that shows up with the id of another one has an age of its own.
 * An instance's age is measured on this caller's clock from when its warmup started,
 * decided when this caller first sees it: its {@code atlas.registered-at} metadata where
 * this caller's own sightings confirm it (the two hosts' clocks may disagree: a
 * registration time in the future counts as the time this caller first saw the instance;
 * one more than a warmup window before the last list this caller saw without the instance
 * is replaced by that time of first sighting; a large skew is logged once), else when
 * this caller first saw it; instances without that metadata in the very first list this
 * caller sees count as warm (a caller that starts does not treat its whole fleet as new).
 * An instance missing from every list seen for longer than {@link #forgetAfterMillis()}
 * (max(10 min, 2 × duration)) is forgotten and is new when it comes back; one missing for
 * less (a registry flap, or lists that show part of the fleet, as Spring's hint-based or
 * same-instance suppliers below the stage emit) keeps its age. Start times are resolved
 * once per snapshot; effective weights are recomputed at most once per tick (one second
 * by default) per snapshot while an instance is warming, never per request. Once every
 * instance of a snapshot is warm, the snapshot itself is returned without reading the
 * clock, so a balancer's tables stay memoized and the per-request cost is one memo
 * lookup.
 *
 * <p>
 * Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class SlowStart implements WeightAdjuster, Ordered {

	/**
	 * How far a registration time may be off this caller's sightings before it is taken
	 * for a clock skew and logged (ms).
	 */
	static final long SKEW_TOLERANCE_MILLIS = 5_000;

	/**
	 * How long before the previous list a newly listed instance's registration time must
	 * be, at least, to be logged as a clock behind (ms): longer than registries list
	 * late.
	 */
	static final long BEHIND_LOGGED_AFTER_MILLIS = 300_000;

	private static final long WARM = Long.MIN_VALUE;

	private static final long PRESENT = Long.MAX_VALUE;

	private static final Logger log = LoggerFactory.getLogger(SlowStart.class);

	private final WarmupRules rules;

	private final Clock clock;

	private final long tickMillis;

	private final long forgetAfterMillis;

	/** What this caller has seen of the service's instances, shared by every version. */
	private final Sightings sightings;

	/**
	 * Start times of the snapshot resolved last, for the report; never read per request.
	 */
	private volatile @Nullable Holder latest;

	// Built once: a method reference written at the call site would be a new object on
	// every request.
	private final Function<InstanceSnapshot, Holder> holder = this::holder;

	/**
	 * Creates the warmup of one service, recomputing once per second.
	 * @param rules the rules
	 * @param clock wall clock in epoch ms (registration times are epoch ms); not
	 * {@code null}
	 */
	public SlowStart(WarmupRules rules, Clock clock) {
		this(rules, clock, 1_000);
	}

	/**
	 * Creates the warmup of one service.
	 * @param rules the rules
	 * @param clock wall clock
	 * @param tickMillis how often effective weights are recomputed, in ms, {@code >= 1}
	 * @throws IllegalArgumentException if {@code tickMillis < 1}
	 */
	public SlowStart(WarmupRules rules, Clock clock, long tickMillis) {
		this(rules, clock, tickMillis, new Sightings());
	}

	private SlowStart(WarmupRules rules, Clock clock, long tickMillis, Sightings sightings) {
		this.rules = Objects.requireNonNull(rules, "rules");
		this.clock = Objects.requireNonNull(clock, "clock");
		if (tickMillis < 1) {
			throw new IllegalArgumentException("tickMillis must be >= 1, was " + tickMillis);
		}
		this.tickMillis = tickMillis;
		this.forgetAfterMillis = Math.max(TimeUnit.MINUTES.toMillis(10), 2 * rules.duration().toMillis());
		this.sightings = sightings;
	}

	/**
	 * The warmup of the same service under other rules (a runtime change of
	 * configuration): it keeps what this one has seen, so every instance keeps its age
	 * (when it was first seen), and the new duration, aggression and minimum weight apply
	 * from its first snapshot on. Both may be used at once (requests that started before
	 * the change finish with this one). Warmup turned on after being off starts afresh:
	 * while off it saw nothing, so it counts the instances of the first list it sees as
	 * warm, as at startup.
	 * @param next the new rules
	 * @return a new adjuster sharing this one's knowledge of the instances (none when
	 * warmup was off)
	 */
	public SlowStart withRules(WarmupRules next) {
		Sightings seen = this.rules.enabled() ? this.sightings : new Sightings();
		return new SlowStart(next, this.clock, this.tickMillis, seen);
	}

	/**
	 * How long an instance may be missing from every list seen before it is forgotten
	 * (and new when it comes back).
	 * @return ms, max(10 min, 2 × the warmup duration)
	 */
	public long forgetAfterMillis() {
		return this.forgetAfterMillis;
	}

	/**
	 * The rules in force.
	 * @return the rules
	 */
	public WarmupRules rules() {
		return this.rules;
	}

	/**
	 * The candidates with warmup applied to their effective weights.
	 * @param candidates the service's instances, before any request-dependent narrowing
	 * by Atlas
	 * @return {@code candidates} itself when no instance is warming, else a snapshot of
	 * the same instances with reduced effective weights
	 */
	public InstanceSnapshot apply(InstanceSnapshot candidates) {
		if (!this.rules.enabled() || candidates.isEmpty()) {
			return candidates;
		}
		Holder holder = candidates.derive(this, this.holder);
		State state = holder.state;
		if (state == State.WARM) {
			return candidates;
		}
		long now = this.clock.millis();
		if (state != null && state.tick == now / this.tickMillis) {
			return Objects.requireNonNull(state.result, "only WARM has no result");
		}
		state = compute(candidates, holder.starts, now);
		holder.state = state;
		return (state != State.WARM) ? Objects.requireNonNull(state.result, "only WARM has no result") : candidates;
	}

	/**
	 * Warmup as a weight adjuster: {@link #apply}.
	 * @param candidates the service's instances
	 * @return as {@link #apply}
	 */
	@Override
	public InstanceSnapshot adjust(InstanceSnapshot candidates) {
		return apply(candidates);
	}

	/**
	 * Runs at {@link WeightAdjuster#WARMUP_ORDER}.
	 * @return {@value WeightAdjuster#WARMUP_ORDER}
	 */
	@Override
	public int getOrder() {
		return WARMUP_ORDER;
	}

	/**
	 * How many instances of the list seen last are still warming up, now (for the
	 * {@code atlas.warmup.instances} gauge).
	 * @return {@code >= 0}; {@code 0} before the first list and when warmup is off
	 */
	public int warmingInstances() {
		Holder holder = this.latest;
		if (holder == null || !this.rules.enabled()) {
			return 0;
		}
		long now = this.clock.millis();
		int warming = 0;
		for (long start : holder.starts) {
			if (factorAt(start, now) < 1.0) {
				warming++;
			}
		}
		return warming;
	}

	/**
	 * The warmup factor of an instance of the list resolved last: what its configured
	 * weight is multiplied by in the effective weights computed at the last tick, so that
	 * it matches the effective weight shown beside it (for the actuator view).
	 * @param instance an instance, matched by {@link InstanceKey} (id, host and port)
	 * @return a factor in (0, 1]; {@code 1} for a warm instance, one not in that list,
	 * and when warmup is off
	 */
	public double factor(ServiceInstance instance) {
		Holder holder = this.latest;
		if (holder == null || !this.rules.enabled()) {
			return 1.0;
		}
		Integer position = holder.positions().get(InstanceKey.of(instance));
		if (position == null) {
			return 1.0;
		}
		State state = holder.state;
		if (state == null) {
			return factorAt(holder.starts[position], this.clock.millis());
		}
		double[] factors = state.factors;
		return (factors != null) ? factors[position] : 1.0;
	}

	private double factorAt(long start, long now) {
		return (start == WARM) ? 1.0 : this.rules.factor(now - Math.min(start, now));
	}

	private Holder holder(InstanceSnapshot snapshot) {
		long now = this.clock.millis();
		Map<InstanceKey, Seen> previous = this.sightings.known;
		Map<InstanceKey, Seen> next = new HashMap<>(Math.max(16, snapshot.size() * 2));
		long[] starts = new long[snapshot.size()];
		InstanceKey[] keys = new InstanceKey[starts.length];
		for (int i = 0; i < starts.length; i++) {
			InstanceKey key = snapshot.key(i);
			keys[i] = key;
			Seen before = (previous != null) ? previous.get(key) : null;
			long start = (before != null) ? before.start
					: firstStart(key, snapshot.attributes(i).registeredAtMillis(), previous != null, now);
			next.put(key, new Seen(start, PRESENT));
			starts[i] = start;
		}
		if (previous != null) {
			previous.forEach((key, seen) -> {
				if (!next.containsKey(key)) {
					long absentSince = (seen.absentSince == PRESENT) ? now : seen.absentSince;
					if (now - absentSince < this.forgetAfterMillis) {
						next.put(key, new Seen(seen.start, absentSince));
					}
				}
			});
		}
		this.sightings.known = next;
		this.sightings.resolvedAt = now;
		Holder holder = new Holder(keys, starts);
		this.latest = holder;
		return holder;
	}

	/**
	 * When an instance's warmup starts, decided when this caller first sees it, on this
	 * caller's clock: the provider's registration time is trusted only where this
	 * caller's own sightings bound it, since the two hosts' clocks may disagree.
	 * <ul>
	 * <li>In the first list this caller sees (it cannot tell when the instance came): the
	 * registration time, but not later than now (a provider clock ahead would keep the
	 * instance at the minimum weight for as long as it is ahead); warm without one.</li>
	 * <li>Appearing in a later list: the registration time when it falls between one
	 * warmup window before the previous list this caller resolved (a registry may list an
	 * instance late) and now, else now (a provider clock behind would give a brand-new
	 * instance its full weight at once).</li>
	 * </ul>
	 * Logged once per instance: a registration time more than
	 * {@value #SKEW_TOLERANCE_MILLIS} ms in the future (the provider's clock is ahead),
	 * or one before the previous list by more than max(5 min, 5 warmup windows) when the
	 * instance was not in it (more than any registry's listing delay).
	 */
	private long firstStart(InstanceKey key, long registeredAt, boolean seenBefore, long now) {
		boolean stamped = registeredAt != InstanceAttributes.UNKNOWN_REGISTRATION_TIME;
		if (stamped && registeredAt > now + SKEW_TOLERANCE_MILLIS) {
			skew(key, registeredAt - now, "ahead of");
		}
		if (!seenBefore) {
			return stamped ? Math.min(registeredAt, now) : WARM;
		}
		// A registration up to one warmup window before the previous list may just not
		// have been listed yet (registry caches: Eureka's take up to 90 s); earlier than
		// that, the instance warms up from now (a provider clock behind, or an instance
		// hidden until now: either way this caller has not seen it serve).
		long previousList = this.sightings.resolvedAt;
		long window = this.rules.duration().toMillis();
		if (stamped && registeredAt < previousList - Math.max(BEHIND_LOGGED_AFTER_MILLIS, 5 * window)) {
			skew(key, previousList - registeredAt, "behind");
		}
		return (stamped && registeredAt >= previousList - window && registeredAt <= now) ? registeredAt : now;
	}

	private void skew(InstanceKey key, long millis, String relation) {
		this.sightings.skewWarnings.once(key.toString(),
				(k) -> log
					.warn("Instance {}: its registration time (atlas.registered-at) is {} ms {} this caller's clock "
							+ "or this caller's sightings; the host clocks likely disagree. Its warmup is timed on "
							+ "this caller's clock, from when it first saw the instance", key, millis, relation));
	}

	private State compute(InstanceSnapshot candidates, long[] starts, long now) {
		double[] weights = candidates.effectiveWeights();
		double[] factors = new double[starts.length];
		boolean warming = false;
		for (int i = 0; i < starts.length; i++) {
			factors[i] = factorAt(starts[i], now);
			if (factors[i] < 1.0) {
				warming = true;
				weights[i] *= factors[i];
			}
		}
		// Ages only grow: a snapshot found warm stays warm.
		return warming ? new State(now / this.tickMillis, candidates.withEffectiveWeights(weights), factors)
				: State.WARM;
	}

	/** What a caller has seen of a service's instances. */
	private static final class Sightings {

		/**
		 * Each instance seen within the horizon; replaced as a whole when a new snapshot
		 * is resolved.
		 */
		volatile @Nullable Map<InstanceKey, Seen> known;

		/** Epoch ms when {@link #known} was last replaced (a list was resolved). */
		volatile long resolvedAt;

		/**
		 * One WARN per instance whose registration time disagrees with this caller's
		 * clock, shared by every version of the rules as the sightings are.
		 */
		final OncePerKeyLog skewWarnings = new OncePerKeyLog();

	}

	/**
	 * What is known of one instance.
	 *
	 * @param start epoch ms on this caller's clock when its warmup started, decided when
	 * this caller first saw it, or {@link #WARM}
	 * @param absentSince epoch ms since when it is missing from the lists seen, or
	 * {@link #PRESENT}
	 */
	private record Seen(long start, long absentSince) {
	}

	/**
	 * The per-snapshot slot: start times by position, resolved once, and the last
	 * computation.
	 */
	private static final class Holder {

		final InstanceKey[] keys;

		final long[] starts;

		volatile @Nullable State state;

		private volatile @Nullable Map<InstanceKey, Integer> positions;

		Holder(InstanceKey[] keys, long[] starts) {
			this.keys = keys;
			this.starts = starts;
		}

		/**
		 * Position by instance key, built on first use by the report (never per request).
		 */
		Map<InstanceKey, Integer> positions() {
			Map<InstanceKey, Integer> map = this.positions;
			if (map == null) {
				map = new HashMap<>(Math.max(16, this.keys.length * 2));
				for (int i = 0; i < this.keys.length; i++) {
					map.putIfAbsent(this.keys[i], i);
				}
				this.positions = map;
			}
			return map;
		}

	}

	/**
	 * One computation.
	 *
	 * @param tick the clock tick it was made in
	 * @param result the snapshot with effective weights
	 */
	private record State(long tick, @Nullable InstanceSnapshot result, double @Nullable [] factors) {

		/** Every instance of the snapshot is warm, for good. */
		static final State WARM = new State(Long.MIN_VALUE, null, null);

	}

}
