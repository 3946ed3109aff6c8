package dev.atlas.loadbalancer.spi;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;

import org.springframework.cloud.client.ServiceInstance;

/**
 * An extension point of Atlas's pipeline: narrows the candidates of one request (gray
 * lane, cluster affinity, retry avoidance; an application's own rule). Filters run in
 * order (Spring's {@code Ordered} / {@code @Order}; the built-in ones use the constants
 * below), after every {@link WeightAdjuster}, each on what the previous one left.
 *
 * <p>
 * <strong>Filters only narrow, and never see an empty list.</strong> The stage stops at
 * the first step that leaves nothing (an empty registry list, or a filter's empty
 * result): the request gets "no instance available" with that step's reason, and the
 * filters after it are not called. A filter therefore cannot supply fallback instances
 * when the list is empty; a fallback belongs before Atlas's stage (a
 * {@code ServiceInstanceListSupplier} delegate, or Spring Cloud's cached and
 * health-checked suppliers) or in the built-in fallbacks ({@code atlas.gray.fallback},
 * affinity's spill-over).
 *
 * <p>
 * Declare a bean of this type in the application context and Atlas applies it to every
 * service it balances; declare it in a {@code @LoadBalancerClient} configuration to apply
 * it to one service. A filter that does not depend on the request should memoize its
 * result per snapshot ({@link InstanceSnapshot#derive}), as {@link #excluding} does, so
 * that a request costs a lookup, not a scan.
 *
 * <p>
 * Implementations must be thread-safe, must not block, and should not allocate per
 * request once their result for a snapshot is memoized.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface CandidateFilter {

	/** Order of the gray-lane filter. */
	int GRAY_ORDER = 1000;

	/** Order of the cluster-affinity filter. */
	int AFFINITY_ORDER = 2000;

	/**
	 * Order of retry avoidance (leave out the instance that just failed); the stage runs
	 * it after every other filter in any case.
	 */
	int RETRY_AVOIDANCE_ORDER = Integer.MAX_VALUE;

	/**
	 * The candidates of one request.
	 * @param candidates what the previous stages left, never empty (see the class
	 * documentation)
	 * @param request the request being load-balanced
	 * @return a subset of {@code candidates} (or {@code candidates} itself), with the
	 * very instance objects and effective weights of {@code candidates}, e.g. from
	 * {@link InstanceSnapshot#filter}; may be empty (the caller then gets "no instance
	 * available"). Return the same object for the same input whenever the result is the
	 * same, so that the strategy's per-snapshot tables stay memoized.
	 */
	InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request);

	/**
	 * Why a request gets no instance when this filter is the one that left no candidate
	 * (its input was not empty, its result is): the reason named in the error the caller
	 * sees. Called only then, never on a request that gets an instance. A filter that
	 * takes instances out for a reason of its own (e.g. outlier ejection: every instance
	 * ejected) returns that reason.
	 * @return {@link NoInstanceReason#FILTERED_OUT} unless overridden; never {@code null}
	 */
	default NoInstanceReason emptyReason() {
		return NoInstanceReason.FILTERED_OUT;
	}

	/**
	 * A filter that leaves out the instances matching a predicate, whatever the request,
	 * evaluated once per snapshot (never per request). Example: leave out instances whose
	 * metadata says {@code maintenance=true}: <pre>
	 * CandidateFilter.excluding((i) -&gt; "true".equals(i.getMetadata().get("maintenance")))
	 * </pre>
	 * @param exclude called once per instance and snapshot; an exception it throws counts
	 * as "keep" (a broken rule never takes instances out of service)
	 * @return a new filter
	 */
	static CandidateFilter excluding(Predicate<ServiceInstance> exclude) {
		Objects.requireNonNull(exclude, "exclude");
		return new CandidateFilter() {

			private final Function<InstanceSnapshot, InstanceSnapshot> kept = (snapshot) -> snapshot
				.filter((i) -> !test(exclude, snapshot.get(i)));

			@Override
			public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
				return candidates.derive(this, this.kept);
			}

		};
	}

	private static boolean test(Predicate<ServiceInstance> exclude, ServiceInstance instance) {
		try {
			return exclude.test(instance);
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

}
