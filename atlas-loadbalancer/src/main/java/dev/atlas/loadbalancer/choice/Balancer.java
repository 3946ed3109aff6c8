package dev.atlas.loadbalancer.choice;

import java.util.List;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.PickContext;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Chooses one instance from a candidate list, without Reactor, so that the algorithms can
 * be used and measured alone. The pipeline's {@code AtlasLoadBalancer} adapts a strategy
 * to Spring Cloud LoadBalancer.
 *
 * <p>
 * A balancer works on {@link InstanceSnapshot}s, by position: {@link #snapshotOf} parses
 * a list once per list object, {@link #chooseIndex} picks a position in it (so that a
 * caller can keep data of its own by position, without a lookup by instance).
 * {@link #choose} does both; implement the other two.
 *
 * <p>
 * Implementations are thread-safe and take no lock when the same candidate list is passed
 * again.
 *
 * @since 0.1.0
 */
public interface Balancer extends LoadBalancingStrategy {

	/**
	 * The parsed view of a candidate list.
	 * @param candidates the list emitted by the supplier chain, may be empty, must not be
	 * mutated after it was passed here (implementations memoize work on its identity)
	 * @return {@code candidates} itself when it is a snapshot, else its snapshot, parsed
	 * once per list object
	 */
	InstanceSnapshot snapshotOf(List<ServiceInstance> candidates);

	/**
	 * Chooses a position in a snapshot.
	 * @param candidates the candidates, may be empty
	 * @return {@code 0 <= index < candidates.size()}, or {@code -1} when there is none to
	 * choose (empty snapshot, or every weight 0 under
	 * {@link AllZeroWeightsPolicy#REJECT})
	 */
	int chooseIndex(InstanceSnapshot candidates);

	/**
	 * Chooses an instance: {@link #chooseIndex} over {@link #snapshotOf}.
	 * @param candidates as for {@link #snapshotOf}
	 * @return the very object found in {@code candidates}, or {@code null} when there is
	 * none to choose
	 */
	default @Nullable ServiceInstance choose(List<ServiceInstance> candidates) {
		InstanceSnapshot snapshot = snapshotOf(candidates);
		int index = chooseIndex(snapshot);
		return (index >= 0) ? snapshot.get(index) : null;
	}

	/**
	 * Chooses by {@link #chooseIndex(InstanceSnapshot)}: a weighted balancer reads only
	 * the effective weights, not the request.
	 */
	@Override
	default int choose(InstanceSnapshot candidates, PickContext context) {
		return chooseIndex(candidates);
	}

}
