package dev.atlas.loadbalancer.routing;

import java.util.Objects;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters of one service's cluster affinity, shared by every version of its filter (a
 * runtime change of the rules builds a new filter, which keeps reporting into the same
 * series):
 * <ul>
 * <li>{@value #SPILLOVER_METER}: requests sent to every cluster because the own one had
 * too few usable instances (threshold and strict rules);</li>
 * <li>{@value #CROSS_ZONE_METER}: requests that proportional zone routing sent to another
 * zone;</li>
 * <li>{@value #LOCAL_RATIO_METER}: the share of requests (ratio 0..1) the filter's last
 * decision keeps in the caller's zone, {@code NaN} before the first one.</li>
 * </ul>
 * All tagged {@code service}. Thread-safe.
 *
 * @since 0.1.0
 */
public final class AffinityMeters {

	/**
	 * Counter of requests that spilled over out of the caller's cluster; tags
	 * {@code service}.
	 */
	public static final String SPILLOVER_METER = "atlas.affinity.spillover";

	/**
	 * Counter of requests proportional zone routing sent to another zone; tags
	 * {@code service}.
	 */
	public static final String CROSS_ZONE_METER = "atlas.affinity.cross.zone";

	/**
	 * Gauge of the share of requests kept in the caller's zone (ratio 0..1); tags
	 * {@code service}.
	 */
	public static final String LOCAL_RATIO_METER = "atlas.affinity.local.ratio";

	final Counter spillovers;

	final Counter crossZone;

	private volatile double localShare = Double.NaN;

	/**
	 * Registers the meters of one service.
	 * @param serviceId the service
	 * @param registry where they are registered; not {@code null}
	 */
	public AffinityMeters(String serviceId, MeterRegistry registry) {
		Objects.requireNonNull(serviceId, "serviceId");
		this.spillovers = Counter.builder(SPILLOVER_METER)
			.description("Requests sent outside the caller's cluster because it had too few usable instances")
			.tag("service", serviceId)
			.register(registry);
		this.crossZone = Counter.builder(CROSS_ZONE_METER)
			.description("Requests proportional zone routing sent to another zone than the caller's")
			.tag("service", serviceId)
			.register(registry);
		Gauge.builder(LOCAL_RATIO_METER, this, AffinityMeters::localShare)
			.description("Share of the requests cluster affinity keeps in the caller's zone (0..1)")
			.tag("service", serviceId)
			.strongReference(true)
			.register(registry);
	}

	/**
	 * The share the last decision keeps in the caller's zone.
	 * @return a ratio 0..1, {@code NaN} before the first decision
	 */
	public double localShare() {
		return this.localShare;
	}

	void localShare(double share) {
		this.localShare = share;
	}

}
