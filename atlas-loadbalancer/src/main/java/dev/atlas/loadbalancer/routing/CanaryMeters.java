package dev.atlas.loadbalancer.routing;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters of one service's percentage canaries, shared by every version of its
 * {@link GrayRouter} (a runtime change of the rules builds a new router, which keeps
 * reporting into the same series):
 * <ul>
 * <li>{@value #CANARY_METER}: the requests the percentage rules decided (those that want
 * no tag, when {@link GrayRules#canaryPercentages()} is not empty), by the lane they were
 * sent to: a canary tag, or {@value #BASELINE_LANE} when the draw picked no canary or a
 * canary without instances;</li>
 * <li>{@value #TARGET_METER}: each canary tag's configured share of those requests (ratio
 * 0..1).</li>
 * </ul>
 * Tagged {@code service} and {@code lane}. The series follow the rules in force
 * ({@link #inForce}): a tag removed from the rules takes its series with it, so that a
 * canary that was closed leaves no target behind. A canary's share of one caller's
 * requests in Prometheus: {@code rate(atlas_gray_canary_total{lane="v2"}[5m]) /
 * ignoring(lane) sum without(lane) (rate(atlas_gray_canary_total[5m]))}. A canary tag
 * spelled {@value #BASELINE_LANE} is counted with the baseline. Thread-safe: the counters
 * are lock-free, {@link #inForce} and {@link #close()} lock.
 *
 * @since 0.1.0
 */
public final class CanaryMeters {

	/**
	 * Counter of requests (one per percentage choice) the percentage rules sent to each
	 * lane; tags {@code service}, {@code lane}.
	 */
	public static final String CANARY_METER = "atlas.gray.canary";

	/**
	 * Gauge of each canary tag's configured share (ratio 0..1); tags {@code service},
	 * {@code lane}.
	 */
	public static final String TARGET_METER = "atlas.gray.canary.target";

	/** The {@code lane} of requests the percentage rules left on the baseline. */
	public static final String BASELINE_LANE = "baseline";

	private final String serviceId;

	private final MeterRegistry registry;

	/** Guarded by {@code this}: the counters registered, by lane. */
	private final Map<String, Counter> counters = new HashMap<>();

	/** Guarded by {@code this}: the target gauges registered, by tag. */
	private final Map<String, Gauge> gauges = new HashMap<>();

	/** The shares in force (ratio 0..1), by tag; replaced whole. */
	private volatile Map<String, Double> targets = Map.of();

	/**
	 * Creates the meters of one service; nothing is registered before {@link #inForce}.
	 * @param serviceId the service
	 * @param registry where they are registered; not {@code null}
	 */
	public CanaryMeters(String serviceId, MeterRegistry registry) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.registry = Objects.requireNonNull(registry, "registry");
	}

	/**
	 * The percentage rules now in force: registers the counters and target gauges of
	 * their tags and of {@value #BASELINE_LANE}, and removes those of every other lane
	 * (none at all when {@code percentages} is empty). Call it when rules take effect,
	 * not when they are only being prepared.
	 * @param percentages canary tag → percentage 0..100, as
	 * {@link GrayRules#canaryPercentages()}; not {@code null}
	 */
	public synchronized void inForce(Map<String, Double> percentages) {
		Map<String, Double> shares = new HashMap<>();
		percentages.forEach((tag, percent) -> shares.put(tag, percent / 100.0));
		this.targets = Map.copyOf(shares);
		this.counters.entrySet()
			.removeIf((entry) -> !(shares.containsKey(entry.getKey())
					|| (BASELINE_LANE.equals(entry.getKey()) && !shares.isEmpty())) && removed(entry.getValue()));
		this.gauges.entrySet().removeIf((entry) -> !shares.containsKey(entry.getKey()) && removed(entry.getValue()));
		if (shares.isEmpty()) {
			return;
		}
		counter(BASELINE_LANE);
		for (String tag : shares.keySet()) {
			counter(tag);
			this.gauges.computeIfAbsent(tag,
					(lane) -> Gauge.builder(TARGET_METER, this, (meters) -> meters.target(lane))
						.description("Configured share (0..1) of the requests without a tag that a canary gets")
						.tag("service", this.serviceId)
						.tag("lane", lane)
						.strongReference(true)
						.register(this.registry));
		}
	}

	/**
	 * The counter of one lane, registered if it is not yet (a router being prepared for
	 * rules not yet in force takes its counters here; {@link #inForce} removes them if
	 * those rules never take effect).
	 * @param lane a canary tag or {@value #BASELINE_LANE}
	 * @return the counter
	 */
	synchronized Counter counter(String lane) {
		return this.counters.computeIfAbsent(lane,
				(key) -> Counter.builder(CANARY_METER)
					.description("Requests without a tag that the percentage rules sent to each lane")
					.tag("service", this.serviceId)
					.tag("lane", key)
					.register(this.registry));
	}

	/**
	 * The configured share of a canary tag.
	 * @param tag the tag
	 * @return a ratio 0..1, {@code NaN} when the tag has no percentage rule in force
	 */
	public double target(String tag) {
		Double share = this.targets.get(tag);
		return (share != null) ? share : Double.NaN;
	}

	/**
	 * Removes every meter of this service (its load-balancer context is closing).
	 * Idempotent.
	 */
	public synchronized void close() {
		this.counters.values().forEach(this::removed);
		this.gauges.values().forEach(this::removed);
		this.counters.clear();
		this.gauges.clear();
		this.targets = Map.of();
	}

	private boolean removed(Meter meter) {
		this.registry.remove(meter);
		return true;
	}

}
