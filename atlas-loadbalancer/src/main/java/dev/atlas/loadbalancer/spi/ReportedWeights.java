package dev.atlas.loadbalancer.spi;

import java.util.function.BooleanSupplier;

import dev.atlas.loadbalancer.instance.InstanceKey;

/**
 * Weights computed from the load the instances of one service report themselves (ORCA's
 * {@code endpoint-load-metrics}), for a strategy that builds its selection tables from
 * them off the request path. Implementations recompute the weights periodically, not per
 * request, and call their listeners after each recomputation.
 *
 * <p>
 * Implementations are thread-safe; {@link #weight} is a hash lookup and a volatile read.
 *
 * @since 0.1.0
 */
public interface ReportedWeights {

	/** No reports: every weight unknown, no recomputation. */
	ReportedWeights NONE = new ReportedWeights() {

		@Override
		public double weight(InstanceKey instance) {
			return 0;
		}

		@Override
		public void subscribe(BooleanSupplier listener) {
		}

	};

	/**
	 * The weight of an instance as of the last recomputation.
	 * @param instance the instance
	 * @return {@code > 0} when known; {@code 0} when unknown (no valid report, reports
	 * younger than the blackout period, or none for longer than the expiration period)
	 */
	double weight(InstanceKey instance);

	/**
	 * Registers a listener called, off the request path, after each recomputation.
	 * @param listener returns {@code false} when it no longer wants to be called (its
	 * owner is gone), and is then dropped; must not throw and must be quick
	 */
	void subscribe(BooleanSupplier listener);

}
