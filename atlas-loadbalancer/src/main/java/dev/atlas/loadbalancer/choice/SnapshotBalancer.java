package dev.atlas.loadbalancer.choice;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.Counter;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Base of the weighted balancers: memoizes, per candidate list, the parsed
 * {@link InstanceSnapshot} and a strategy-specific selection table built from its
 * effective weights, so that a pick is a volatile read, a map lookup and the table
 * lookup. Candidates that already are snapshots (as Atlas's supplier stages emit) carry
 * the table themselves; any other list is parsed once per list object
 * ({@link SnapshotCache}). No lock is taken; when the list changes, concurrent callers
 * may build the new table twice, which is harmless (both results are equal).
 *
 * <p>
 * Handles the edge cases once for every strategy: an empty list (WARN once per snapshot,
 * no choice), a single positive-weight candidate, and all weights 0
 * ({@link AllZeroWeightsPolicy}).
 *
 * @param <T> the per-snapshot selection table
 * @since 0.1.0
 */
public abstract class SnapshotBalancer<T> implements Balancer {

	/**
	 * Name of the counter of requests that met an all-zero-weights list; tags
	 * {@code service, policy}.
	 */
	public static final String ALL_ZERO_WEIGHTS_METER = "atlas.weights.all.zero";

	private static final Logger log = LoggerFactory.getLogger(SnapshotBalancer.class);

	private final String serviceId;

	private final SnapshotCache snapshots;

	private final AllZeroWeightsPolicy allZeroWeightsPolicy;

	private final Counter allZeroWeights;

	// Built once: a method reference written at the call site would be a new object on
	// every request.
	private final Function<InstanceSnapshot, Prepared<T>> prepare = this::prepare;

	/**
	 * Creates the balancer of one service.
	 * @param settings the service, its parser and all-zero-weights policy, and where
	 * {@value #ALL_ZERO_WEIGHTS_METER} is registered
	 */
	protected SnapshotBalancer(StrategySettings settings) {
		this.serviceId = settings.serviceId();
		this.snapshots = new SnapshotCache(settings.parser());
		this.allZeroWeightsPolicy = settings.allZeroWeights();
		this.allZeroWeights = Counter.builder(ALL_ZERO_WEIGHTS_METER)
			.description("Requests whose candidates all had weight 0, handled by the all-zero-weights policy")
			.tag("service", this.serviceId)
			.tag("policy", this.allZeroWeightsPolicy.value())
			.register(settings.meterRegistry());
	}

	@Override
	public final InstanceSnapshot snapshotOf(List<ServiceInstance> candidates) {
		return this.snapshots.snapshotOf(candidates);
	}

	/**
	 * Chooses a position without a request or live statistics
	 * ({@link #choose(InstanceSnapshot, PickContext)} with nothing in flight and no
	 * latency known).
	 */
	@Override
	public final int chooseIndex(InstanceSnapshot candidates) {
		return choose(candidates, NoPickContext.INSTANCE);
	}

	/**
	 * Chooses for a request: the edge cases once per snapshot, then
	 * {@link #pick(Object, PickContext)}.
	 */
	@Override
	public int choose(InstanceSnapshot candidates, PickContext context) {
		Prepared<T> current = candidates.derive(this, this.prepare);
		if (current.allZero) {
			this.allZeroWeights.increment();
		}
		if (current.only >= 0) {
			return current.only;
		}
		T table = current.table;
		return (table != null) ? pick(table, context) : -1;
	}

	private Prepared<T> prepare(InstanceSnapshot snapshot) {
		if (snapshot.isEmpty()) {
			log.warn("No instance available for service '{}'", this.serviceId);
			return new Prepared<>(null, -1, false);
		}
		double[] weights = snapshot.effectiveWeights();
		boolean allZero = snapshot.totalEffectiveWeight() == 0;
		if (allZero) {
			if (this.allZeroWeightsPolicy == AllZeroWeightsPolicy.REJECT) {
				log.warn("All {} instances of service '{}' have weight 0; rejecting requests "
						+ "(atlas.loadbalancer.all-zero-weights=reject)", snapshot.size(), this.serviceId);
				return new Prepared<>(null, -1, true);
			}
			log.warn("All {} instances of service '{}' have weight 0; treating them as equal weights "
					+ "(atlas.loadbalancer.all-zero-weights=fail-open)", snapshot.size(), this.serviceId);
			Arrays.fill(weights, 1.0);
		}
		int only = singlePositive(weights);
		return new Prepared<>((only >= 0) ? null : buildTable(snapshot, weights), only, allZero);
	}

	private static int singlePositive(double[] weights) {
		int found = -1;
		for (int i = 0; i < weights.length; i++) {
			if (weights[i] > 0) {
				if (found >= 0) {
					return -1;
				}
				found = i;
			}
		}
		return found;
	}

	/**
	 * Builds the selection table for one snapshot. Called once per snapshot, never per
	 * request.
	 * @param candidates the snapshot, e.g. for state kept per candidate set
	 * ({@link dev.atlas.loadbalancer.instance.CandidateSet})
	 * @param weights one finite weight {@code >= 0} per instance, in snapshot order, at
	 * least two of them positive (all-zero weights already replaced by the policy); the
	 * array is owned by the callee
	 * @return the table
	 */
	protected abstract T buildTable(InstanceSnapshot candidates, double[] weights);

	/**
	 * Picks an index from a table built by {@link #buildTable}. Must be thread-safe and
	 * take no lock.
	 * @param table a table
	 * @return an index of an instance whose weight is positive
	 */
	protected abstract int pick(T table);

	/**
	 * Picks an index from a table built by {@link #buildTable}, for a request. Must be
	 * thread-safe and take no lock. By default {@link #pick(Object)}: the request and the
	 * live statistics are not read.
	 * @param table a table
	 * @param context the request and live per-instance statistics, by position in the
	 * snapshot the table was built from
	 * @return an index of an instance whose weight is positive
	 */
	protected int pick(T table, PickContext context) {
		return pick(table);
	}

	/**
	 * The service this balancer serves.
	 * @return the service id
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * Everything derived from one candidate list.
	 *
	 * @param table selection table, {@code null} when there is nothing to choose or a
	 * single candidate
	 * @param only index of the single positive-weight candidate, or {@code -1}
	 * @param allZero whether the all-zero-weights policy applied
	 */
	private record Prepared<T>(@Nullable T table, int only, boolean allZero) {
	}

}
