package dev.atlas.autoconfigure.affinity;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Atlas's cluster affinity under new caller-level rules: a new filter when the caller's
 * affinity rules differ from those the filter in force resolved. A filter that has not
 * resolved its rules yet (before its first request) is kept: it resolves the rules in
 * force then. Adds {@code affinity} to a service's view: the rules its filter holds, or
 * {@code null} before they are resolved (or without Atlas's filter). Thread-safe.
 *
 * @since 0.1.0
 */
public final class AffinityStep implements RuntimeStep {

	private final String serviceId;

	private final Supplier<@Nullable AffinityRules> nextRules;

	private final MeterRegistry meters;

	private final Clock clock;

	private volatile @Nullable ClusterAffinity current;

	/**
	 * Creates the step.
	 * @param serviceId the service
	 * @param filter the affinity filter Atlas built for the service, or {@code null}
	 * @param nextRules the caller's rules now (those of a change being applied), or
	 * {@code null} when not resolved yet
	 * @param meters where a new filter's meters are registered
	 * @param clock the time of spill-over warnings
	 */
	public AffinityStep(String serviceId, @Nullable ClusterAffinity filter, Supplier<@Nullable AffinityRules> nextRules,
			MeterRegistry meters, Clock clock) {
		this.serviceId = serviceId;
		this.current = filter;
		this.nextRules = nextRules;
		this.meters = meters;
		this.clock = clock;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		ClusterAffinity filter = this.current;
		if (filter == null || !change.inForce(filter)) {
			return null;
		}
		AffinityRules before = filter.resolvedRules();
		AffinityRules next = this.nextRules.get();
		if (before == null || next == null || next.equals(before)) {
			return null;
		}
		ClusterAffinity replacement = new ClusterAffinity(this.serviceId, next, this.meters, this.clock);
		return Rebuild.replacing(filter, () -> {
			this.current = replacement;
			return replacement;
		});
	}

	/**
	 * The rules the filter in force holds.
	 * @return {@code null} without Atlas's filter, or before its first request resolved
	 * the caller's cluster
	 */
	public @Nullable AffinityRules rules() {
		ClusterAffinity filter = this.current;
		return (filter != null) ? filter.resolvedRules() : null;
	}

	@Override
	public Map<String, @Nullable Object> view() {
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("affinity", rules());
		return view;
	}

}
