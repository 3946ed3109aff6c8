package dev.atlas.autoconfigure.affinity;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.routing.AffinityMode;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.ZoneShares;
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
	 * How requests are split between the caller's zone and the others: proportional
	 * (zone-aware routing that keeps every provider equally loaded given how callers and
	 * providers are spread over the zones, and leaves a zone gradually as its providers
	 * fail; the threshold rules apply while it cannot be computed), threshold (own zone
	 * only until min-instances or min-healthy-ratio is not met, then every zone) or
	 * strict (own zone only while one instance there is usable).
	 */
	private AffinityMode mode = AffinityMode.PROPORTIONAL;

	/**
	 * In proportional mode, zone routing is off (the threshold rules apply) while the
	 * service has fewer providers than this. 6 by default, as Envoy.
	 */
	private int minClusterSize = ZoneShares.DEFAULT_MIN_CLUSTER_SIZE;

	/**
	 * In proportional mode, how often the callers' spread over the zones (the instances
	 * of this application's own service in the registry, counted per zone) is read again.
	 * 10 seconds by default.
	 */
	private Duration callersRefreshInterval = Duration.ofSeconds(10);

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
			if (this.callersRefreshInterval.isNegative() || this.callersRefreshInterval.isZero()) {
				throw new IllegalArgumentException(
						"callers-refresh-interval must be positive, was " + this.callersRefreshInterval);
			}
			return new AffinityRules(this.enabled ? own : null, this.mode, this.minHealthyRatio, this.minInstances,
					this.minClusterSize);
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

	public AffinityMode getMode() {
		return this.mode;
	}

	public void setMode(AffinityMode mode) {
		this.mode = mode;
	}

	public int getMinClusterSize() {
		return this.minClusterSize;
	}

	public void setMinClusterSize(int minClusterSize) {
		this.minClusterSize = minClusterSize;
	}

	public Duration getCallersRefreshInterval() {
		return this.callersRefreshInterval;
	}

	public void setCallersRefreshInterval(Duration callersRefreshInterval) {
		this.callersRefreshInterval = callersRefreshInterval;
	}

	public int getMinInstances() {
		return this.minInstances;
	}

	public void setMinInstances(int minInstances) {
		this.minInstances = minInstances;
	}

}
