package dev.atlas.loadbalancer.routing;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.instance.InstanceKey;
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
 * its {@link InstanceKey}: instance id, host and port together (not by object identity:
 * the registry client may have produced new objects since, and not every
 * {@code ServiceInstance} implements {@code equals}; not by id alone: two instances that
 * report one id are still two). When nothing would be left, the candidates stay as they
 * are, so the caller sees that instance's own error rather than "no instance available".
 *
 * <p>
 * The reduced candidates are memoized per snapshot and left-out position, so a retry
 * costs a scan for the failed instance and allocates nothing once its set is known; a
 * strategy's per-snapshot tables (e.g. smooth round robin's position for the reduced set)
 * stay memoized too, for as long as the parent snapshot is in use. The reduced candidates
 * are {@linkplain InstanceSnapshot#asShortLived() short-lived}: a strategy keeps no state
 * for them beyond the snapshot (there is one such set per instance, n sets of n − 1
 * instances for a fleet of n), so a retry's set starts at a new position after each
 * refresh or warmup tick, and the sets of a large fleet take no room from the state of
 * the sets that first attempts use.
 *
 * <p>
 * Stateless but for that memo, and thread-safe; a first attempt costs one type check.
 *
 * @since 0.1.0
 */
public final class RetryAvoidance implements CandidateFilter, Ordered {

	/** Key of the memo: the candidates without the instance at each position. */
	private static final Object MEMO = new Object();

	private static final Function<InstanceSnapshot, AtomicReferenceArray<InstanceSnapshot>> WITHOUT = (
			snapshot) -> new AtomicReferenceArray<>(snapshot.size());

	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		Request<?> spring = request.request();
		ServiceInstance previous = (spring != null && spring.getContext() instanceof RetryableRequestContext retry)
				? retry.getPreviousServiceInstance() : null;
		return avoid(candidates, (previous != null) ? BracketedHost.original(previous) : null);
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
		int failed = -1;
		for (int i = 0; i < candidates.size(); i++) {
			if (candidates.key(i).matches(previous)) {
				failed = i;
				break;
			}
		}
		if (failed < 0) {
			return candidates;
		}
		AtomicReferenceArray<InstanceSnapshot> without = candidates.derive(MEMO, WITHOUT);
		InstanceSnapshot others = without.get(failed);
		if (others == null) {
			InstanceKey key = candidates.key(failed);
			others = candidates.filter((i) -> !candidates.key(i).equals(key));
			// Short-lived: a strategy keeps its state for this set on the set itself
			// (gone with the parent snapshot), not across refreshes; see
			// InstanceSnapshot.asShortLived.
			others = others.isEmpty() ? candidates : others.asShortLived();
			// Two threads may both compute it; the first one stored is kept.
			if (!without.compareAndSet(failed, null, others)) {
				others = without.get(failed);
			}
		}
		return others;
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
