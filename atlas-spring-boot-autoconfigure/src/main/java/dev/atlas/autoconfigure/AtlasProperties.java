package dev.atlas.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.atlas.loadbalancer.choice.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.choice.Strategy;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Atlas's configuration, bound from {@code atlas.*}. Invalid values fail startup with a message naming the
 * property and the allowed values.
 */
@ConfigurationProperties(prefix = AtlasProperties.PREFIX)
public class AtlasProperties {

	/** Prefix of every Atlas property. */
	public static final String PREFIX = "atlas";

	/**
	 * Whether Atlas is the load balancer of every @LoadBalanced client. When false, Spring Cloud
	 * LoadBalancer's defaults apply unchanged.
	 */
	private boolean enabled = true;

	/** Defaults of the choice among candidate instances, for every service. */
	private final LoadBalancer loadbalancer = new LoadBalancer();

	/** Per-service overrides, keyed by service id (e.g. atlas.services.user-service.loadbalancer.strategy). */
	private final Map<String, Service> services = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public LoadBalancer getLoadbalancer() {
		return this.loadbalancer;
	}

	public Map<String, Service> getServices() {
		return this.services;
	}

	/**
	 * The load-balancer settings that apply to one service: its overrides, else the defaults.
	 * @param serviceId a service id, not {@code null}
	 * @return never {@code null}
	 */
	public ResolvedLoadBalancer resolve(String serviceId) {
		Service service = this.services.get(serviceId);
		LoadBalancer overrides = (service != null) ? service.getLoadbalancer() : null;
		Strategy strategy = (overrides != null && overrides.strategy != null) ? overrides.strategy
				: this.loadbalancer.strategyOrDefault();
		AllZeroWeightsPolicy policy = (overrides != null && overrides.allZeroWeights != null)
				? overrides.allZeroWeights : this.loadbalancer.allZeroWeightsOrDefault();
		return new ResolvedLoadBalancer(strategy, policy);
	}

	/**
	 * The effective choice settings of one service.
	 * @param strategy never {@code null}
	 * @param allZeroWeights never {@code null}
	 */
	public record ResolvedLoadBalancer(Strategy strategy, AllZeroWeightsPolicy allZeroWeights) {
	}

	/** Choice among candidate instances. */
	public static class LoadBalancer {

		/**
		 * Load-balancing algorithm: weighted-random (default; O(1) per pick) or smooth-round-robin (nginx's
		 * smooth weighted round robin). Both honour registry weights; weight 0 means drained.
		 */
		private @Nullable Strategy strategy;

		/**
		 * What to do when every candidate has weight 0: fail-open (default; treat them as equal weights, log
		 * one WARN, count in atlas.weights.all.zero) or reject (no instance: the caller gets a 503, counted in
		 * atlas.weights.all.zero).
		 */
		private @Nullable AllZeroWeightsPolicy allZeroWeights;

		public @Nullable Strategy getStrategy() {
			return this.strategy;
		}

		public void setStrategy(@Nullable Strategy strategy) {
			this.strategy = strategy;
		}

		public @Nullable AllZeroWeightsPolicy getAllZeroWeights() {
			return this.allZeroWeights;
		}

		public void setAllZeroWeights(@Nullable AllZeroWeightsPolicy allZeroWeights) {
			this.allZeroWeights = allZeroWeights;
		}

		Strategy strategyOrDefault() {
			return (this.strategy != null) ? this.strategy : Strategy.WEIGHTED_RANDOM;
		}

		AllZeroWeightsPolicy allZeroWeightsOrDefault() {
			return (this.allZeroWeights != null) ? this.allZeroWeights : AllZeroWeightsPolicy.FAIL_OPEN;
		}

	}

	/** Overrides for one service; anything left unset falls back to the global atlas.* value. */
	public static class Service {

		/** Choice settings of this service. */
		private final LoadBalancer loadbalancer = new LoadBalancer();

		public LoadBalancer getLoadbalancer() {
			return this.loadbalancer;
		}

	}

}
