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
import org.jspecify.annotations.Nullable;

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
 * An instance's age is measured from its {@code atlas.registered-at} metadata (a time in
 * the future counts as now), else from when this caller first saw it: instances in the
 * very first list this caller sees count as warm (a caller that starts does not treat its
 * whole fleet as new). An instance missing from every list seen for longer than
 * {@link #forgetAfterMillis()} (max(10 min, 2 × duration)) is forgotten and is new when
 * it comes back; one missing for less (a registry flap, or lists that show part of the
 * fleet, as Spring's hint-based or same-instance suppliers below the stage emit) keeps
 * its age. Start times are resolved once per snapshot; effective weights are recomputed
 * at most once per tick (one second by default) per snapshot while an instance is
 * warming, never per request. Once every instance of a snapshot is warm, the snapshot
 * itself is returned without reading the clock, so a balancer's tables stay memoized and
 * the per-request cost is one memo lookup.
 *
 * <p>
 * Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class SlowStart implements WeightAdjuster, Ordered {

	private static final long WARM = Long.MIN_VALUE;

	private static final long PRESENT = Long.MAX_VALUE;

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
			long firstSeenAt = (before != null) ? before.firstSeen : ((previous != null) ? now : WARM);
			next.put(key, new Seen(firstSeenAt, PRESENT));
			long registeredAt = snapshot.attributes(i).registeredAtMillis();
			starts[i] = (registeredAt != InstanceAttributes.UNKNOWN_REGISTRATION_TIME) ? registeredAt : firstSeenAt;
		}
		if (previous != null) {
			previous.forEach((key, seen) -> {
				if (!next.containsKey(key)) {
					long absentSince = (seen.absentSince == PRESENT) ? now : seen.absentSince;
					if (now - absentSince < this.forgetAfterMillis) {
						next.put(key, new Seen(seen.firstSeen, absentSince));
					}
				}
			});
		}
		this.sightings.known = next;
		Holder holder = new Holder(keys, starts);
		this.latest = holder;
		return holder;
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

	}

	/**
	 * What is known of one instance.
	 *
	 * @param firstSeen epoch ms when this caller first saw it, or {@link #WARM}
	 * @param absentSince epoch ms since when it is missing from the lists seen, or
	 * {@link #PRESENT}
	 */
	private record Seen(long firstSeen, long absentSince) {
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
