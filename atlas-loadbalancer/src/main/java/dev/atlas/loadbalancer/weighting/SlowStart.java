package dev.atlas.loadbalancer.weighting;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import dev.atlas.loadbalancer.instance.InstanceAttributes;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Slow start (warmup): gives young instances a reduced effective weight that ramps up over
 * {@link WarmupRules#duration()} ({@link WarmupRules#factor(long)}), so a cold JVM is not handed its full
 * share at once.
 *
 * <p>An instance's age is measured from its {@code atlas.registered-at} metadata (a time in the future
 * counts as now), else from when this caller first saw it in the list: instances present in the very first
 * list this caller sees count as warm (a caller that starts does not treat its whole fleet as new); an
 * instance that leaves the list and comes back (a restart at the same address) is new again. Start times
 * are resolved once per snapshot; effective weights are recomputed at most once per tick (one second by
 * default) per snapshot while an instance is warming, never per request. Once every instance of a snapshot
 * is warm, the snapshot itself is returned without reading the clock, so a balancer's tables stay memoized
 * and the per-request cost is one map lookup.
 *
 * <p>Thread-safe and lock-free.
 */
public final class SlowStart {

	private static final long WARM = Long.MIN_VALUE;

	private final WarmupRules rules;

	private final Clock clock;

	private final long tickMillis;

	/** When each instance of the last full list was first seen ({@link #WARM} for warm from the start). */
	private volatile @Nullable Map<String, Long> firstSeen;

	// Built once: a method reference written at the call site would be a new object on every request.
	private final Function<InstanceSnapshot, Holder> holder = this::holder;

	/**
	 * Creates the warmup of one service, recomputing once per second.
	 * @param rules not {@code null}
	 * @param clock wall clock in epoch ms (registration times are epoch ms); not {@code null}
	 */
	public SlowStart(WarmupRules rules, Clock clock) {
		this(rules, clock, 1_000);
	}

	/**
	 * Creates the warmup of one service.
	 * @param rules not {@code null}
	 * @param clock wall clock; not {@code null}
	 * @param tickMillis how often effective weights are recomputed, in ms, {@code >= 1}
	 * @throws IllegalArgumentException if {@code tickMillis < 1}
	 */
	public SlowStart(WarmupRules rules, Clock clock, long tickMillis) {
		this.rules = Objects.requireNonNull(rules, "rules");
		this.clock = Objects.requireNonNull(clock, "clock");
		if (tickMillis < 1) {
			throw new IllegalArgumentException("tickMillis must be >= 1, was " + tickMillis);
		}
		this.tickMillis = tickMillis;
	}

	/**
	 * The rules in force.
	 * @return never {@code null}
	 */
	public WarmupRules rules() {
		return this.rules;
	}

	/**
	 * The candidates with warmup applied to their effective weights.
	 * @param candidates the service's whole instance list (not a lane of it: what is absent from it is
	 *     forgotten); not {@code null}
	 * @return {@code candidates} itself when no instance is warming, else a snapshot of the same instances
	 *     with reduced effective weights; never {@code null}
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
			return state.result;
		}
		state = compute(candidates, holder.starts, now);
		holder.state = state;
		return (state == State.WARM) ? candidates : state.result;
	}

	private Holder holder(InstanceSnapshot snapshot) {
		long now = this.clock.millis();
		Map<String, Long> previous = this.firstSeen;
		Map<String, Long> seen = new HashMap<>(snapshot.size() * 2);
		long[] starts = new long[snapshot.size()];
		for (int i = 0; i < starts.length; i++) {
			String key = key(snapshot.get(i));
			Long before = (previous != null) ? previous.get(key) : null;
			long firstSeenAt = (before != null) ? before : ((previous == null) ? WARM : now);
			seen.put(key, firstSeenAt);
			long registeredAt = snapshot.attributes(i).registeredAtMillis();
			starts[i] = (registeredAt != InstanceAttributes.UNKNOWN_REGISTRATION_TIME) ? registeredAt : firstSeenAt;
		}
		this.firstSeen = seen;
		return new Holder(starts);
	}

	private State compute(InstanceSnapshot candidates, long[] starts, long now) {
		double[] weights = candidates.effectiveWeights();
		boolean warming = false;
		long duration = this.rules.duration().toMillis();
		for (int i = 0; i < starts.length; i++) {
			if (starts[i] == WARM) {
				continue;
			}
			double factor = this.rules.factor(now - Math.min(starts[i], now));
			if (factor < 1.0) {
				warming = true;
				weights[i] *= factor;
			}
		}
		// Ages only grow: a snapshot found warm stays warm.
		return warming ? new State(now / this.tickMillis, candidates.withEffectiveWeights(weights)) : State.WARM;
	}

	private static String key(ServiceInstance instance) {
		String id = instance.getInstanceId();
		return (id != null) ? id : instance.getHost() + ':' + instance.getPort();
	}

	/** The per-snapshot slot: start times by position, resolved once, and the last computation. */
	private static final class Holder {

		final long[] starts;

		volatile @Nullable State state;

		Holder(long[] starts) {
			this.starts = starts;
		}

	}

	/**
	 * One computation.
	 * @param tick the clock tick it was made in
	 * @param result the snapshot with effective weights
	 */
	private record State(long tick, @Nullable InstanceSnapshot result) {

		/** Every instance of the snapshot is warm, for good. */
		static final State WARM = new State(Long.MIN_VALUE, null);

	}

}
