package dev.atlas.autoconfigure.affinity;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.routing.AffinityRules;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Cluster affinity, {@code atlas.affinity.*}: prefer instances of the caller's own
 * cluster or zone. A caller-level setting (the caller has one cluster), not per service.
 * Mutable while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = AffinityProperties.PREFIX)
public class AffinityProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".affinity";

	/** Whether calls prefer instances of the caller's own cluster. */
	private boolean enabled = true;

	/**
	 * The caller's own cluster or zone. Defaults to
	 * spring.cloud.nacos.discovery.cluster-name when set, else the zone of Spring Cloud's
	 * LoadBalancerZoneConfig (spring.cloud.loadbalancer.zone, or what a registry
	 * integration such as Eureka's sets), read once at the first call; no cluster turns
	 * affinity off. Compared case-insensitively with the instances' nacos.cluster or zone
	 * metadata.
	 */
	private @Nullable String cluster;

	/**
	 * Spill over to all clusters when fewer than this ratio (0..1) of the own cluster's
	 * registered instances are usable (not marked unhealthy). 0.1 by default.
	 */
	private double minHealthyRatio = 0.1;

	/**
	 * Spill over to all clusters when the own cluster has fewer usable instances than
	 * this. 1 by default.
	 */
	private int minInstances = 1;

	/**
	 * Validates the thresholds.
	 * @throws IllegalArgumentException naming the property when a threshold is out of
	 * range
	 */
	@Override
	public void afterPropertiesSet() {
		toRules(null);
	}

	/**
	 * The affinity rules of this caller.
	 * @param defaultCluster the cluster to use when {@code atlas.affinity.cluster} is not
	 * set (the Nacos cluster name, else the zone of Spring Cloud's
	 * {@code LoadBalancerZoneConfig}), may be {@code null}
	 * @return without a cluster when disabled or when there is none (affinity off)
	 * @throws IllegalArgumentException naming the property when a threshold is out of
	 * range
	 */
	public AffinityRules toRules(@Nullable String defaultCluster) {
		String own = (this.cluster != null && !this.cluster.isBlank()) ? this.cluster : defaultCluster;
		try {
			return new AffinityRules(this.enabled ? own : null, this.minHealthyRatio, this.minInstances);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid " + PREFIX + "." + ex.getMessage(), ex);
		}
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable String getCluster() {
		return this.cluster;
	}

	public void setCluster(@Nullable String cluster) {
		this.cluster = cluster;
	}

	public double getMinHealthyRatio() {
		return this.minHealthyRatio;
	}

	public void setMinHealthyRatio(double minHealthyRatio) {
		this.minHealthyRatio = minHealthyRatio;
	}

	public int getMinInstances() {
		return this.minInstances;
	}

	public void setMinInstances(int minInstances) {
		this.minInstances = minInstances;
	}

}
