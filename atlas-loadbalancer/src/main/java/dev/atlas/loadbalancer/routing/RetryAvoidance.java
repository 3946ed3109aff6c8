package dev.atlas.loadbalancer.routing;

import java.util.Objects;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.core.Ordered;

/**
 * On a retry, leaves out the instance that just failed, whatever the strategy. The failed
 * instance comes from Spring Cloud's {@link RetryableRequestContext} and is matched by
 * instance id, else by host and port (not by object identity: the registry client may
 * have produced new objects since, and not every {@code ServiceInstance} implements
 * {@code equals}). When nothing would be left, the candidates stay as they are, so the
 * caller sees that instance's own error rather than "no instance available".
 *
 * <p>
 * Stateless and thread-safe; a first attempt costs one type check.
 */
public final class RetryAvoidance implements CandidateFilter, Ordered {

	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		Request<?> spring = request.request();
		ServiceInstance previous = (spring != null && spring.getContext() instanceof RetryableRequestContext retry)
				? retry.getPreviousServiceInstance() : null;
		return avoid(candidates, previous);
	}

	/**
	 * The candidates without an instance.
	 * @param candidates the candidates
	 * @param previous the instance to leave out, or {@code null} for none
	 * @return {@code candidates} without {@code previous}, or {@code candidates} itself
	 * when {@code previous} is {@code null}, absent, or the only candidate
	 */
	public static InstanceSnapshot avoid(InstanceSnapshot candidates, @Nullable ServiceInstance previous) {
		if (previous == null) {
			return candidates;
		}
		InstanceSnapshot others = candidates.filter((i) -> !sameInstance(candidates.get(i), previous));
		return others.isEmpty() ? candidates : others;
	}

	static boolean sameInstance(ServiceInstance a, ServiceInstance b) {
		if (a == b) {
			return true;
		}
		String idA = a.getInstanceId();
		String idB = b.getInstanceId();
		if (idA != null && idB != null) {
			return idA.equals(idB);
		}
		return a.getPort() == b.getPort() && Objects.equals(a.getHost(), b.getHost());
	}

	/**
	 * Runs last among the built-in filters, at
	 * {@link CandidateFilter#RETRY_AVOIDANCE_ORDER}.
	 * @return {@value CandidateFilter#RETRY_AVOIDANCE_ORDER}
	 */
	@Override
	public int getOrder() {
		return RETRY_AVOIDANCE_ORDER;
	}

}
