package dev.atlas.loadbalancer.choice;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Chooses one instance from a candidate list, without Reactor, so that the algorithms can be used and
 * measured alone. {@link AtlasLoadBalancer} adapts a balancer to Spring Cloud LoadBalancer.
 *
 * <p>Implementations are thread-safe and take no lock when the same candidate list is passed again.
 */
public interface Balancer {

	/**
	 * Chooses an instance.
	 * @param candidates the list emitted by the supplier chain; not {@code null}, may be empty, must not be
	 *     mutated after it was passed here (implementations memoize work on its identity)
	 * @return the very object found in {@code candidates}, or {@code null} when there is none to choose
	 *     (empty list, or every weight 0 under {@link AllZeroWeightsPolicy#REJECT})
	 */
	@Nullable ServiceInstance choose(List<ServiceInstance> candidates);

	/**
	 * The strategy this balancer implements.
	 * @return never {@code null}
	 */
	Strategy strategy();

}
