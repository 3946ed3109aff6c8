package dev.atlas.loadbalancer.choice;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.ReportedWeights;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * The {@value #NAME} strategy: weighted round robin over the weights the instances' own
 * load reports give, as gRFC A58 ({@code weighted_round_robin}) and Envoy's
 * {@code client_side_weighted_round_robin} define it. Each instance's weight is
 * {@code qps ÷ (utilization + eps ÷ qps × error penalty)} from its latest report
 * ({@link ReportedWeights}); an instance without a weight in force (no report yet, still
 * in its blackout period, or its reports expired) gets the mean of the others' weights,
 * so that with fewer than two weights known every instance is equal: round robin. The
 * registry's weights are not used, but a weight of 0 still drains an instance, and
 * warmup's ramp multiplies the reported weight (the candidate's effective weight over its
 * registry weight). Picks follow a {@link StaticStrideScheduler} per candidate set.
 *
 * <p>
 * Off the request path: the scheduler of each candidate set (each snapshot, lane or
 * affinity subset) is built once when the set is first met, and rebuilt with the new
 * weights after each recomputation of the reported weights (every second by default), on
 * the thread that recomputes them, for as long as the set's snapshot is in use (the
 * tables are weakly held). A retry's short-lived set keeps the weights of its first use.
 * A pick reads the current scheduler (one volatile read) and takes sequence numbers from
 * the set's counter until one falls on an instance's turn: lock-free, no allocation.
 *
 * @since 0.1.0
 */
public final class WeightedRoundRobinBalancer extends SnapshotBalancer<WeightedRoundRobinBalancer.Table> {

	/** The name of this strategy in properties. */
	public static final String NAME = "weighted-round-robin";

	private final ReportedWeights reported;

	/**
	 * The tables of the snapshots still in use; weakly held, as the snapshots hold them.
	 */
	private final Set<Table> tables = Collections.newSetFromMap(new WeakHashMap<>());

	/**
	 * Creates the balancer of one service.
	 * @param settings the service and its settings
	 * @param reported the service's reported weights; this balancer follows their
	 * recomputations for as long as it is reachable
	 */
	public WeightedRoundRobinBalancer(StrategySettings settings, ReportedWeights reported) {
		super(settings);
		this.reported = Objects.requireNonNull(reported, "reported");
		WeakReference<WeightedRoundRobinBalancer> self = new WeakReference<>(this);
		reported.subscribe(() -> {
			WeightedRoundRobinBalancer balancer = self.get();
			if (balancer == null) {
				return false;
			}
			balancer.refresh();
			return true;
		});
	}

	/**
	 * Registers this strategy under {@value #NAME}.
	 * @param reported the reported weights of a service, by service id; called once per
	 * service
	 * @return the factory
	 */
	public static StrategyFactory factory(Function<String, ReportedWeights> reported) {
		Objects.requireNonNull(reported, "reported");
		return StrategyFactory.of(NAME,
				(settings) -> new WeightedRoundRobinBalancer(settings, reported.apply(settings.serviceId())));
	}

	@Override
	protected Table buildTable(InstanceSnapshot candidates, double[] weights) {
		int n = candidates.size();
		InstanceKey[] keys = new InstanceKey[n];
		double[] ramps = new double[n];
		for (int i = 0; i < n; i++) {
			keys[i] = candidates.key(i);
			double registered = candidates.attributes(i).weight();
			// warmup's ramp (and any other adjustment of the registry weight); an
			// instance weighing 0 in the registry that the all-zero policy let through
			// is taken at full weight
			ramps[i] = (registered > 0) ? weights[i] / registered : ((weights[i] > 0) ? 1 : 0);
		}
		Table table = new Table(keys, ramps, new AtomicLong(ThreadLocalRandom.current().nextInt(1000)));
		table.rebuild(this.reported);
		if (!candidates.isShortLived()) {
			// a retry's set (one per instance of its parent) is built once from the
			// weights in force: following them all would cost n sets of n instances a
			// second
			synchronized (this.tables) {
				this.tables.add(table);
			}
		}
		return table;
	}

	@Override
	protected int pick(Table table) {
		return table.scheduler.pick();
	}

	/** Rebuilds every live table's scheduler from the weights now in force. */
	private void refresh() {
		List<Table> live;
		synchronized (this.tables) {
			live = new ArrayList<>(this.tables);
		}
		for (Table table : live) {
			table.rebuild(this.reported);
		}
	}

	/**
	 * Number of candidate sets whose scheduler follows the weights (tests).
	 * @return {@code >= 0}
	 */
	int liveTables() {
		synchronized (this.tables) {
			return this.tables.size();
		}
	}

	@Override
	public String name() {
		return NAME;
	}

	/** One candidate set: its instances, their ramps, its sequence and scheduler. */
	static final class Table {

		private final InstanceKey[] keys;

		private final double[] ramps;

		private final AtomicLong sequence;

		private volatile StaticStrideScheduler scheduler;

		Table(InstanceKey[] keys, double[] ramps, AtomicLong sequence) {
			this.keys = keys;
			this.ramps = ramps;
			this.sequence = sequence;
			this.scheduler = StaticStrideScheduler.of(ramps, sequence);
		}

		/**
		 * The weights of gRFC A58 for this set: the reported one, or the mean of the
		 * reported ones for an instance without; times the ramp.
		 */
		void rebuild(ReportedWeights reported) {
			int n = this.keys.length;
			double[] weights = new double[n];
			double sum = 0;
			int known = 0;
			for (int i = 0; i < n; i++) {
				if (this.ramps[i] > 0) {
					weights[i] = reported.weight(this.keys[i]);
					if (weights[i] > 0) {
						sum += weights[i];
						known++;
					}
				}
			}
			double mean = (known > 0) ? sum / known : 1;
			for (int i = 0; i < n; i++) {
				double base = (known >= 2 && weights[i] > 0) ? weights[i] : ((known >= 2) ? mean : 1);
				weights[i] = base * this.ramps[i];
			}
			this.scheduler = StaticStrideScheduler.of(weights, this.sequence);
		}

		/**
		 * The scheduler's scaled weights (tests).
		 * @return a copy
		 */
		int[] scaledWeights() {
			return this.scheduler.scaledWeights();
		}

	}

}
