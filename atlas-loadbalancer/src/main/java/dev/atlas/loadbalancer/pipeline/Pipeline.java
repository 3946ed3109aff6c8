package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.WeightAdjuster;

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

	final Function<List<ServiceInstance>, InstanceSnapshot> snapshots;

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
		this(Objects.requireNonNull(snapshots, "snapshots")::snapshotOf, adjusters, filters, strategyName, strategy);
	}

	/**
	 * Creates a version that parses lists with a function of its own (a
	 * {@code Balancer}'s).
	 */
	Pipeline(Function<List<ServiceInstance>, InstanceSnapshot> snapshots, List<? extends WeightAdjuster> adjusters,
			List<? extends CandidateFilter> filters, String strategyName, LoadBalancingStrategy strategy) {
		this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
		this.adjusters = List.copyOf(adjusters).toArray(NO_ADJUSTERS);
		this.filters = List.copyOf(filters).toArray(NO_FILTERS);
		this.strategyName = Objects.requireNonNull(strategyName, "strategyName");
		this.strategy = Objects.requireNonNull(strategy, "strategy");
	}

	/**
	 * A version for a stage alone, whose load balancer chooses with a strategy of its
	 * own.
	 */
	static Pipeline stageOnly(SnapshotCache snapshots, List<? extends WeightAdjuster> adjusters,
			List<? extends CandidateFilter> filters) {
		return new Pipeline(snapshots, adjusters, filters, "none", (candidates, context) -> {
			throw new IllegalStateException("this stage's pipeline has no strategy: its load balancer has its own");
		});
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

	@Override
	public String toString() {
		return "Pipeline[adjusters=" + adjusters() + ", filters=" + filters() + ", strategy=" + this.strategyName + ']';
	}

}
