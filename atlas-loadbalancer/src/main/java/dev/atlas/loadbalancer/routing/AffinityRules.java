package dev.atlas.loadbalancer.routing;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The cluster-affinity rules of one caller.
 *
 * @param cluster the caller's own cluster or zone, compared case-insensitively (stored
 * lower-cased); {@code null} or blank for none, which turns affinity off
 * @param minHealthyRatio spill over to every cluster when the own cluster's usable
 * instances are fewer than this ratio (0..1) of its registered ones
 * @param minInstances spill over when the own cluster has fewer usable instances than
 * this ({@code >= 0})
 * @since 0.1.0
 */
public record AffinityRules(@Nullable String cluster, double minHealthyRatio, int minInstances) {

	/** No own cluster: affinity off. Thresholds as {@link #of(String)}. */
	public static final AffinityRules OFF = new AffinityRules(null, 0.1, 1);

	/**
	 * Validates and normalizes.
	 * @throws IllegalArgumentException if {@code minHealthyRatio} is outside 0..1 or
	 * {@code minInstances} is negative
	 */
	public AffinityRules {
		if (!(minHealthyRatio >= 0 && minHealthyRatio <= 1)) {
			throw new IllegalArgumentException("min-healthy-ratio must be between 0 and 1, was " + minHealthyRatio);
		}
		if (minInstances < 0) {
			throw new IllegalArgumentException("min-instances must be >= 0, was " + minInstances);
		}
		cluster = (cluster == null || cluster.isBlank()) ? null : cluster.trim().toLowerCase(Locale.ROOT);
	}

	/**
	 * Rules with the default thresholds: spill over below 10 % usable or below 1 usable
	 * instance.
	 * @param cluster the caller's cluster, may be {@code null}
	 * @return the rules
	 */
	public static AffinityRules of(@Nullable String cluster) {
		return new AffinityRules(cluster, 0.1, 1);
	}

}
