package dev.atlas.loadbalancer.routing;

import java.util.Locale;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The cluster-affinity rules of one caller.
 *
 * @param cluster the caller's own cluster or zone, compared case-insensitively (stored
 * lower-cased); {@code null} or blank for none, which turns affinity off
 * @param mode how requests are split between the own zone and the others; not
 * {@code null}
 * @param minHealthyRatio spill over to every cluster when the own cluster's usable
 * instances are fewer than this ratio (0..1) of its registered ones
 * @param minInstances spill over when the own cluster has fewer usable instances than
 * this ({@code >= 0}); in {@link AffinityMode#THRESHOLD} mode, and in
 * {@link AffinityMode#PROPORTIONAL} mode while zone routing is off
 * @param minClusterSize in {@link AffinityMode#PROPORTIONAL} mode, zone routing is off
 * when the candidates (the request's lane) count fewer providers than this ({@code >= 0};
 * {@value ZoneShares#DEFAULT_MIN_CLUSTER_SIZE} by default, as Envoy)
 * @since 0.1.0
 */
public record AffinityRules(@Nullable String cluster, AffinityMode mode, double minHealthyRatio, int minInstances,
		int minClusterSize) {

	/** No own cluster: affinity off. Thresholds as {@link #of(String)}. */
	public static final AffinityRules OFF = of(null);

	/**
	 * Validates and normalizes.
	 * @throws IllegalArgumentException if {@code minHealthyRatio} is outside 0..1, or
	 * {@code minInstances} or {@code minClusterSize} is negative
	 * @throws NullPointerException if {@code mode} is {@code null}
	 */
	public AffinityRules {
		Objects.requireNonNull(mode, "mode");
		if (minClusterSize < 0) {
			throw new IllegalArgumentException("min-cluster-size must be >= 0, was " + minClusterSize);
		}
		if (!(minHealthyRatio >= 0 && minHealthyRatio <= 1)) {
			throw new IllegalArgumentException("min-healthy-ratio must be between 0 and 1, was " + minHealthyRatio);
		}
		if (minInstances < 0) {
			throw new IllegalArgumentException("min-instances must be >= 0, was " + minInstances);
		}
		cluster = (cluster == null || cluster.isBlank()) ? null : cluster.trim().toLowerCase(Locale.ROOT);
	}

	/**
	 * Rules in {@link AffinityMode#THRESHOLD} mode.
	 * @param cluster the caller's cluster, may be {@code null}
	 * @param minHealthyRatio as the canonical constructor
	 * @param minInstances as the canonical constructor
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public AffinityRules(@Nullable String cluster, double minHealthyRatio, int minInstances) {
		this(cluster, AffinityMode.THRESHOLD, minHealthyRatio, minInstances, ZoneShares.DEFAULT_MIN_CLUSTER_SIZE);
	}

	/**
	 * Rules in {@link AffinityMode#THRESHOLD} mode with the default thresholds: spill
	 * over below 10 % usable or below 1 usable instance.
	 * @param cluster the caller's cluster, may be {@code null}
	 * @return the rules
	 */
	public static AffinityRules of(@Nullable String cluster) {
		return new AffinityRules(cluster, 0.1, 1);
	}

	/**
	 * These rules for a caller in another zone.
	 * @param zone the zone, may be {@code null}
	 * @return new rules
	 */
	public AffinityRules withZone(@Nullable String zone) {
		return new AffinityRules(zone, this.mode, this.minHealthyRatio, this.minInstances, this.minClusterSize);
	}

	/**
	 * These rules in another mode.
	 * @param mode the mode
	 * @return new rules
	 */
	public AffinityRules withMode(AffinityMode mode) {
		return new AffinityRules(this.cluster, mode, this.minHealthyRatio, this.minInstances, this.minClusterSize);
	}

}
