package dev.atlas.autoconfigure.affinity;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import org.jspecify.annotations.Nullable;

/**
 * Atlas's cluster affinity under new caller-level rules: a new filter when the caller's
 * affinity rules differ from those the filter in force resolved. A filter that has not
 * resolved its rules yet (before its first request) is kept: it resolves the rules in
 * force then. The new filter keeps the callers' spread, outlier detection and meters of
 * the one it replaces. Adds {@code affinity} to a service's view: the rules its filter
 * holds, or {@code null} before they are resolved (or without Atlas's filter). Gives the
 * actuator what the filter in force decided last ({@link #zoneRouting()}). Thread-safe.
 *
 * @since 0.1.0
 */
public final class AffinityStep implements RuntimeStep {

	private final Supplier<@Nullable AffinityRules> nextRules;

	private volatile @Nullable ClusterAffinity current;

	/**
	 * Creates the step.
	 * @param filter the affinity filter Atlas built for the service, or {@code null}
	 * @param nextRules the caller's rules now (those of a change being applied), or
	 * {@code null} when not resolved yet
	 */
	public AffinityStep(@Nullable ClusterAffinity filter, Supplier<@Nullable AffinityRules> nextRules) {
		this.current = filter;
		this.nextRules = nextRules;
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
		ClusterAffinity replacement = filter.withRules(next);
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

	/**
	 * What the filter in force decided last in proportional mode
	 * ({@link ClusterAffinity#zoneRouting()}): live state, not rules, so not in
	 * {@link #view()} (whose changes are logged as rule changes).
	 * @return empty without Atlas's filter or before its first proportional decision
	 */
	public Map<String, Object> zoneRouting() {
		ClusterAffinity filter = this.current;
		return (filter != null) ? filter.zoneRouting() : Map.of();
	}

	@Override
	public Map<String, @Nullable Object> view() {
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("affinity", rules());
		return view;
	}

}
