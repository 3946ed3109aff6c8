package dev.atlas.loadbalancer.weighting;

import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
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
 * counts as now), else from when this caller first saw it. Instances present in the very first list this
 * caller sees, without a registration time, count as warm: a caller that starts does not treat its whole
 * fleet as new. Effective weights are recomputed at most once per tick (one second by default) per input
 * snapshot, not per request; when nobody is warming, the input snapshot itself is returned, so a
 * balancer's tables stay memoized.
 *
 * <p>Thread-safe and lock-free.
 */
public final class SlowStart {

	private static final long WARM = Long.MIN_VALUE;

	private final WarmupRules rules;

	private final Clock clock;

	private final long tickMillis;

	private final Cache<String, Long> firstSeen;

	private volatile boolean sawFirstList;

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
	 */
	public SlowStart(WarmupRules rules, Clock clock, long tickMillis) {
		this.rules = Objects.requireNonNull(rules, "rules");
		this.clock = Objects.requireNonNull(clock, "clock");
		if (tickMillis < 1) {
			throw new IllegalArgumentException("tickMillis must be >= 1, was " + tickMillis);
		}
		this.tickMillis = tickMillis;
		long forget = Math.max(TimeUnit.MINUTES.toMillis(10), 2 * rules.duration().toMillis());
		this.firstSeen = Caffeine.newBuilder().maximumSize(100_000).expireAfterAccess(forget, TimeUnit.MILLISECONDS)
			.build();
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
	 * @param candidates not {@code null}
	 * @return {@code candidates} itself when no instance is warming, else a snapshot of the same instances
	 *     with reduced effective weights; never {@code null}
	 */
	public InstanceSnapshot apply(InstanceSnapshot candidates) {
		if (!this.rules.enabled() || candidates.isEmpty()) {
			return candidates;
		}
		Holder holder = candidates.derive(this, (snapshot) -> new Holder());
		long now = this.clock.millis();
		State state = holder.state;
		if (state != null && (state.tick == now / this.tickMillis || (state.warmUntil <= now && state.result == candidates))) {
			return state.result;
		}
		state = compute(candidates, now);
		holder.state = state;
		return state.result;
	}

	private State compute(InstanceSnapshot candidates, long now) {
		boolean first = !this.sawFirstList;
		this.sawFirstList = true;
		double[] weights = candidates.effectiveWeights();
		boolean warming = false;
		long warmUntil = now;
		long duration = this.rules.duration().toMillis();
		for (int i = 0; i < candidates.size(); i++) {
			long start = start(candidates.get(i), candidates.attributes(i), now, first);
			if (start == WARM) {
				continue;
			}
			double factor = this.rules.factor(now - start);
			if (factor < 1.0) {
				warming = true;
				weights[i] *= factor;
				warmUntil = Math.max(warmUntil, start + duration);
			}
		}
		InstanceSnapshot result = warming ? candidates.withEffectiveWeights(weights) : candidates;
		return new State(now / this.tickMillis, warming ? warmUntil : now, result);
	}

	private long start(ServiceInstance instance, InstanceAttributes attributes, long now, boolean firstList) {
		long registeredAt = attributes.registeredAtMillis();
		if (registeredAt != InstanceAttributes.UNKNOWN_REGISTRATION_TIME) {
			return Math.min(registeredAt, now);
		}
		return this.firstSeen.get(key(instance), (key) -> firstList ? WARM : now);
	}

	private static String key(ServiceInstance instance) {
		String id = instance.getInstanceId();
		return (id != null) ? id : instance.getHost() + ':' + instance.getPort();
	}

	/** The per-snapshot slot for the last computation. */
	private static final class Holder {

		volatile @Nullable State state;

	}

	/**
	 * One computation.
	 * @param tick the clock tick it was made in
	 * @param warmUntil epoch ms when every instance of the snapshot is warm
	 * @param result the snapshot with effective weights
	 */
	private record State(long tick, long warmUntil, InstanceSnapshot result) {
	}

}
