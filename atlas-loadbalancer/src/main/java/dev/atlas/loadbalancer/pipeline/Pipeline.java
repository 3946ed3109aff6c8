package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Objects;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * One version of a service's routing: the weight adjusters, candidate filters and
 * strategy that apply together, and the cache that turns the registry's lists into the
 * snapshots they work on. A request reads the current version of its
 * {@link ServicePipeline} once and goes through that version alone, so a change of rules
 * (a new version) is seen by a request entirely or not at all.
 *
 * <p>
 * Every version has a {@link SnapshotCache} of its own: the work its adjusters, filters
 * and strategy memoize on a snapshot ({@code InstanceSnapshot#derive}) lives on that
 * version's snapshots, is rebuilt lazily for a new version and goes away with the old one
 * (a version's first request parses the current list again, once).
 *
 * <p>
 * Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class Pipeline {

	private static final WeightAdjuster[] NO_ADJUSTERS = {};

	private static final CandidateFilter[] NO_FILTERS = {};

	final SnapshotCache snapshots;

	final WeightAdjuster[] adjusters;

	final CandidateFilter[] filters;

	final LoadBalancingStrategy strategy;

	private final String strategyName;

	/**
	 * Creates a version.
	 * @param snapshots parses the registry's lists into this version's snapshots; not
	 * shared with another version
	 * @param adjusters applied in this order to each snapshot; may be empty, no
	 * {@code null} element
	 * @param filters applied in this order for each request, after the adjusters; may be
	 * empty, no {@code null} element
	 * @param strategyName the name the strategy is registered and configured under
	 * @param strategy chooses among the candidates the filters leave
	 * @throws NullPointerException if an argument or an element is {@code null}
	 */
	public Pipeline(SnapshotCache snapshots, List<? extends WeightAdjuster> adjusters,
			List<? extends CandidateFilter> filters, String strategyName, LoadBalancingStrategy strategy) {
		this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
		this.adjusters = List.copyOf(adjusters).toArray(NO_ADJUSTERS);
		this.filters = List.copyOf(filters).toArray(NO_FILTERS);
		this.strategyName = Objects.requireNonNull(strategyName, "strategyName");
		this.strategy = Objects.requireNonNull(strategy, "strategy");
	}

	/**
	 * A list as this version's filters start from: its snapshot (parsed once per list
	 * object), with every weight adjuster applied in order. Allocates nothing once the
	 * snapshot and the adjusters' work on it are memoized.
	 * @param list a list of the registry (after last-known-good)
	 * @return the adjusted snapshot, possibly empty
	 */
	InstanceSnapshot adjusted(List<ServiceInstance> list) {
		InstanceSnapshot candidates = this.snapshots.snapshotOf(list);
		if (!candidates.isEmpty()) {
			for (WeightAdjuster adjuster : this.adjusters) {
				candidates = adjuster.adjust(candidates);
			}
		}
		return candidates;
	}

	/**
	 * Narrows the candidates for one request through every filter, in order, and gives
	 * the request what is left. A filter after an empty result would only pass it on, so
	 * none runs: the first step that left nothing (the registry's list, or the filter
	 * whose input was not empty) is the reason.
	 * @param candidates the {@linkplain #adjusted adjusted} snapshot
	 * @param request read by the filters; told the candidates they leave (empty or not)
	 * @return {@code null} when candidates are left, else why none are
	 */
	@Nullable NoInstanceReason narrow(InstanceSnapshot candidates, StagedRequest request) {
		if (candidates.isEmpty()) {
			request.candidates(candidates);
			return NoInstanceReason.NO_INSTANCES;
		}
		// One call site per position for the first filters: in an application each of
		// them sees one filter class, so the JIT inlines it; a single loop call site
		// would
		// see every class and dispatch megamorphically on every pick (measured: about
		// 10 % of a pick with the three built-in filters).
		CandidateFilter[] filters = this.filters;
		int count = filters.length;
		InstanceSnapshot left = candidates;
		if (count > 0) {
			left = filters[0].filter(left, request);
			if (left.isEmpty()) {
				return emptyBecause(left, filters[0], request);
			}
		}
		if (count > 1) {
			left = filters[1].filter(left, request);
			if (left.isEmpty()) {
				return emptyBecause(left, filters[1], request);
			}
		}
		if (count > 2) {
			left = filters[2].filter(left, request);
			if (left.isEmpty()) {
				return emptyBecause(left, filters[2], request);
			}
		}
		if (count > 3) {
			left = filters[3].filter(left, request);
			if (left.isEmpty()) {
				return emptyBecause(left, filters[3], request);
			}
		}
		for (int i = 4; i < count; i++) {
			left = filters[i].filter(left, request);
			if (left.isEmpty()) {
				return emptyBecause(left, filters[i], request);
			}
		}
		request.candidates(left);
		return null;
	}

	private static NoInstanceReason emptyBecause(InstanceSnapshot empty, CandidateFilter filter,
			StagedRequest request) {
		request.candidates(empty);
		return filter.emptyReason();
	}

	/**
	 * The weight adjusters, in the order applied.
	 * @return an unmodifiable list
	 */
	public List<WeightAdjuster> adjusters() {
		return List.of(this.adjusters);
	}

	/**
	 * The candidate filters, in the order applied.
	 * @return an unmodifiable list
	 */
	public List<CandidateFilter> filters() {
		return List.of(this.filters);
	}

	/**
	 * The name of the strategy, as registered and configured.
	 * @return e.g. {@code weighted-random}
	 */
	public String strategyName() {
		return this.strategyName;
	}

	/**
	 * The strategy.
	 * @return the strategy
	 */
	public LoadBalancingStrategy strategy() {
		return this.strategy;
	}

	/**
	 * The first step of a type in this version: its weight adjusters, then its candidate
	 * filters, then its strategy. Not for the request path (a loop over the steps).
	 * @param type the type looked for
	 * @param <T> the type
	 * @return {@code null} when no step is of that type
	 */
	public <T> @Nullable T step(Class<T> type) {
		for (WeightAdjuster adjuster : this.adjusters) {
			if (type.isInstance(adjuster)) {
				return type.cast(adjuster);
			}
		}
		for (CandidateFilter filter : this.filters) {
			if (type.isInstance(filter)) {
				return type.cast(filter);
			}
		}
		return type.isInstance(this.strategy) ? type.cast(this.strategy) : null;
	}

	@Override
	public String toString() {
		return "Pipeline[adjusters=" + adjusters() + ", filters=" + filters() + ", strategy=" + this.strategyName + ']';
	}

}
