package dev.atlas.autoconfigure;

import java.util.Objects;

import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.weighting.WarmupRules;

/**
 * What applies to calls to one service: {@code atlas.<section>.*} overlaid by
 * {@code atlas.services.<serviceId>.<section>.*}, validated. Immutable and thread-safe.
 * Obtained from {@link AtlasSettings#settingsFor(String)}.
 *
 * @param strategy name of the load-balancing strategy, normalized (kebab-case,
 * lower-case, e.g. {@code weighted-random}); not checked against the registered
 * strategies
 * @param allZeroWeights what to do when every candidate has weight 0
 * @param grayEnabled whether requests are routed to lanes by gray tag
 * ({@code atlas.gray.enabled}); when {@code false}, {@link #gray()} is not applied
 * @param gray the gray rules (caller's header and own tag, the service's lane settings
 * and canary percentages)
 * @param warmup the warmup rules; {@link WarmupRules#OFF} when warmup is disabled; never
 * {@code null}
 * @param outlier the outlier detection rules (disabled ones when
 * {@code atlas.outlier.enabled} is {@code false}); never {@code null}
 * @param leastRequest the rules of {@code least-request} (whichever strategy is in use)
 * @param peakEwma the rules of {@code peak-ewma}; its decay time applies to the service's
 * statistics whichever strategy is in use
 * @param hash the rules of {@code ring-hash}
 * @since 0.1.0
 */
public record ServiceSettings(String strategy, AllZeroWeightsPolicy allZeroWeights, boolean grayEnabled, GrayRules gray,
		WarmupRules warmup, OutlierRules outlier, LeastRequestRules leastRequest, PeakEwmaRules peakEwma,
		HashRules hash) {

	/**
	 * Checks that nothing is missing.
	 * @throws NullPointerException if a component is {@code null}
	 */
	public ServiceSettings {
		Objects.requireNonNull(strategy, "strategy");
		Objects.requireNonNull(allZeroWeights, "allZeroWeights");
		Objects.requireNonNull(gray, "gray");
		Objects.requireNonNull(warmup, "warmup");
		Objects.requireNonNull(outlier, "outlier");
		Objects.requireNonNull(leastRequest, "leastRequest");
		Objects.requireNonNull(peakEwma, "peakEwma");
		Objects.requireNonNull(hash, "hash");
	}

}
