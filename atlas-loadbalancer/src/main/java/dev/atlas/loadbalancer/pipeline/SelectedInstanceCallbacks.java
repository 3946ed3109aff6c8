package dev.atlas.loadbalancer.pipeline;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * Which supplier of a chain is told the chosen instance, found once per chain instead of
 * on every pick. Telling the top of a chain goes down through every
 * {@link DelegatingServiceInstanceListSupplier} that does not override
 * {@code selectedServiceInstance} (Spring's implementation only passes the instance on to
 * its delegate when that is a {@link SelectedInstanceCallback}), which costs two type
 * checks and a call per supplier and pick for nothing when, as in Spring Cloud's default
 * chain, no supplier does anything with it. Telling the first supplier that does
 * something (or is not a delegating one) has the same effect.
 */
final class SelectedInstanceCallbacks {

	/** Deeper chains are not walked: the top is told, as Spring does. */
	private static final int MAX_DEPTH = 32;

	private SelectedInstanceCallbacks() {
	}

	/**
	 * The supplier to tell the choice, for the choice told to {@code top}.
	 * @param top the top of the supplier chain
	 * @return the first supplier of the chain that handles the choice itself (it may pass
	 * it on further), or {@code null} when telling {@code top} would reach none
	 */
	static @Nullable SelectedInstanceCallback told(ServiceInstanceListSupplier top) {
		ServiceInstanceListSupplier current = top;
		for (int depth = 0; depth < MAX_DEPTH; depth++) {
			if (!(current instanceof SelectedInstanceCallback callback)) {
				return null;
			}
			if (!(current instanceof DelegatingServiceInstanceListSupplier delegating)
					|| !onlyPassesOn(delegating.getClass())) {
				return callback;
			}
			current = delegating.getDelegate();
		}
		return (top instanceof SelectedInstanceCallback callback) ? callback : null;
	}

	/**
	 * Whether a delegating supplier's class keeps Spring's
	 * {@code selectedServiceInstance}, which passes the choice on to its
	 * {@code delegate}, and Spring's {@code getDelegate}, which returns that delegate.
	 */
	private static boolean onlyPassesOn(Class<?> type) {
		try {
			return type.getMethod("selectedServiceInstance", ServiceInstance.class)
				.getDeclaringClass() == DelegatingServiceInstanceListSupplier.class
					&& type.getMethod("getDelegate").getDeclaringClass() == DelegatingServiceInstanceListSupplier.class;
		}
		catch (NoSuchMethodException | SecurityException ex) {
			return false;
		}
	}

}
