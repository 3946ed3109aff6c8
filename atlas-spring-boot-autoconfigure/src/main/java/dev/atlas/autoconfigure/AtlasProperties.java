package dev.atlas.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.loadbalancer.instance.MetadataKeys;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Atlas's configuration, bound from {@code atlas.*}. Invalid values fail startup with a
 * message naming the property and the allowed values.
 */
@ConfigurationProperties(prefix = AtlasProperties.PREFIX)
public class AtlasProperties implements InitializingBean {

	/** Prefix of every Atlas property. */
	public static final String PREFIX = "atlas";

	/**
	 * Whether Atlas is the load balancer of every @LoadBalanced client. When false,
	 * Spring Cloud LoadBalancer's defaults apply unchanged.
	 */
	private boolean enabled = true;

	/** Defaults of the choice among candidate instances, for every service. */
	private final LoadBalancer loadbalancer = new LoadBalancer();

	/** Gray-tag routing: which lane (tagged instances) each request goes to. */
	private final Gray gray = new Gray();

	/**
	 * Carrying routing headers from inbound requests to outbound calls, across threads
	 * and reactive chains.
	 */
	private final Propagation propagation = new Propagation();

	/** Cluster affinity: prefer instances of the caller's own cluster or zone. */
	private final Affinity affinity = new Affinity();

	/** Warmup (slow start): new instances ramp up their weight. */
	private final Warmup warmup = new Warmup();

	/** Lossless online/offline of this application in its registry. */
	private final Lifecycle lifecycle = new Lifecycle();

	/**
	 * How callers follow the registry: event-driven refresh and last-known-good lists.
	 */
	private final Registry registry = new Registry();

	/**
	 * Per-service overrides, keyed by service id (e.g.
	 * atlas.services.user-service.loadbalancer.strategy).
	 */
	private final Map<String, Service> services = new LinkedHashMap<>();

	/**
	 * Validates what binding cannot: blank header names and gray percentages, for every
	 * service that has some, so that a mistake fails startup instead of the first call.
	 * @throws IllegalArgumentException naming the property and what is allowed
	 */
	@Override
	public void afterPropertiesSet() {
		if (this.gray.header == null || this.gray.header.isBlank()) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + ".gray.header: must be a header name, e.g. X-Service-Version");
		}
		if (this.gray.metadataKey == null || this.gray.metadataKey.isBlank()) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + ".gray.metadata-key: must be a metadata key, e.g. version");
		}
		Set<String> serviceIds = new LinkedHashSet<>(this.gray.weights.keySet());
		serviceIds.addAll(this.services.keySet());
		serviceIds.forEach(this::resolveGray);
		resolveGray("");
		resolveAffinity(null);
		resolveWarmup();
		requireNonNegative("registry.stale-limit", this.registry.staleLimit);
		requireNonNegative("lifecycle.register-delay", this.lifecycle.registerDelay);
		requireNonNegative("lifecycle.drain", this.lifecycle.drain);
		requireNonNegative("lifecycle.deregister-timeout", this.lifecycle.deregisterTimeout);
	}

	private static void requireNonNegative(String property, Duration value) {
		if (value == null || value.isNegative()) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + "." + property + ": must be a duration >= 0, was " + value);
		}
	}

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

	public Gray getGray() {
		return this.gray;
	}

	public Propagation getPropagation() {
		return this.propagation;
	}

	public Affinity getAffinity() {
		return this.affinity;
	}

	public Warmup getWarmup() {
		return this.warmup;
	}

	public Lifecycle getLifecycle() {
		return this.lifecycle;
	}

	public Registry getRegistry() {
		return this.registry;
	}

	/**
	 * The affinity rules of this caller.
	 * @param defaultCluster the cluster to use when {@code atlas.affinity.cluster} is not
	 * set (the Nacos cluster name or {@code spring.cloud.loadbalancer.zone}), may be
	 * {@code null}
	 * @return never {@code null}; {@link AffinityRules#OFF} when disabled or without a
	 * cluster
	 * @throws IllegalArgumentException naming the property when a threshold is out of
	 * range
	 */
	public AffinityRules resolveAffinity(@Nullable String defaultCluster) {
		String cluster = (this.affinity.cluster != null && !this.affinity.cluster.isBlank()) ? this.affinity.cluster
				: defaultCluster;
		try {
			return new AffinityRules(this.affinity.enabled ? cluster : null, this.affinity.minHealthyRatio,
					this.affinity.minInstances);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid " + PREFIX + ".affinity." + ex.getMessage(), ex);
		}
	}

	/**
	 * The warmup rules of this caller.
	 * @return never {@code null}; {@link WarmupRules#OFF} when disabled
	 * @throws IllegalArgumentException naming the property when a value is out of range
	 */
	public WarmupRules resolveWarmup() {
		try {
			WarmupRules rules = new WarmupRules(this.warmup.duration, this.warmup.aggression,
					this.warmup.minWeightPercent);
			return this.warmup.enabled ? rules : WarmupRules.OFF;
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid " + PREFIX + ".warmup." + ex.getMessage(), ex);
		}
	}

	/**
	 * The gray rules that apply to one service: its overrides, else the global values.
	 * @param serviceId a service id, not {@code null}
	 * @return never {@code null}
	 * @throws IllegalArgumentException naming the property when a percentage is invalid
	 */
	public GrayRules resolveGray(String serviceId) {
		Service service = this.services.get(serviceId);
		ServiceGray overrides = (service != null) ? service.getGray() : null;
		GrayFallback fallback = (overrides != null && overrides.fallback != null) ? overrides.fallback
				: this.gray.fallback;
		boolean isolate = (overrides != null && overrides.isolateBaseline != null) ? overrides.isolateBaseline
				: this.gray.isolateBaseline;
		Set<String> baselineTags = (overrides != null && overrides.baselineTags != null) ? overrides.baselineTags
				: this.gray.baselineTags;
		String hashKeyHeader = (overrides != null && overrides.hashKeyHeader != null) ? overrides.hashKeyHeader
				: this.gray.hashKeyHeader;
		Map<String, Double> weights = (overrides != null && !overrides.weights.isEmpty()) ? overrides.weights
				: this.gray.weights.getOrDefault(serviceId, Map.of());
		String property = (overrides != null && !overrides.weights.isEmpty())
				? PREFIX + ".services." + serviceId + ".gray.weights" : PREFIX + ".gray.weights." + serviceId;
		try {
			return new GrayRules(this.gray.header, this.gray.ownTag, fallback, isolate, baselineTags, weights,
					hashKeyHeader);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(
					"Invalid " + property + ": " + ex.getMessage()
							+ " (each value is a percentage 0..100 of untagged requests, adding up to at most 100)",
					ex);
		}
	}

	/**
	 * The headers carried from inbound requests to outbound calls: the configured ones
	 * plus the gray header and the hash-key header.
	 * @return lower-case names, never {@code null}
	 */
	public Set<String> propagatedHeaders() {
		Set<String> headers = new LinkedHashSet<>();
		this.propagation.headers.forEach((header) -> headers.add(header.trim().toLowerCase(java.util.Locale.ROOT)));
		headers.add(this.gray.header.toLowerCase(java.util.Locale.ROOT));
		if (this.gray.hashKeyHeader != null && !this.gray.hashKeyHeader.isBlank()) {
			headers.add(this.gray.hashKeyHeader.trim().toLowerCase(java.util.Locale.ROOT));
		}
		this.services.values().forEach((service) -> {
			String key = service.getGray().hashKeyHeader;
			if (key != null && !key.isBlank()) {
				headers.add(key.trim().toLowerCase(java.util.Locale.ROOT));
			}
		});
		headers.removeIf(String::isEmpty);
		return headers;
	}

	/**
	 * The load-balancer settings that apply to one service: its overrides, else the
	 * defaults.
	 * @param serviceId a service id, not {@code null}
	 * @return never {@code null}
	 */
	public ResolvedLoadBalancer resolve(String serviceId) {
		Service service = this.services.get(serviceId);
		LoadBalancer overrides = (service != null) ? service.getLoadbalancer() : null;
		String strategy = (overrides != null && overrides.strategy != null) ? overrides.strategy
				: this.loadbalancer.strategyOrDefault();
		AllZeroWeightsPolicy policy = (overrides != null && overrides.allZeroWeights != null) ? overrides.allZeroWeights
				: this.loadbalancer.allZeroWeightsOrDefault();
		return new ResolvedLoadBalancer(strategy, policy);
	}

	/**
	 * The effective choice settings of one service.
	 *
	 * @param strategy never {@code null}
	 * @param allZeroWeights never {@code null}
	 */
	public record ResolvedLoadBalancer(String strategy, AllZeroWeightsPolicy allZeroWeights) {
	}

	/** Choice among candidate instances. */
	public static class LoadBalancer {

		/**
		 * Load-balancing strategy, by registered name: weighted-random (default; O(1) per
		 * pick), smooth-round-robin (nginx's smooth weighted round robin), or the name of
		 * a StrategyFactory bean of the application. The built-in ones honour registry
		 * weights; weight 0 means drained. An unknown name fails startup.
		 */
		private @Nullable String strategy;

		/**
		 * What to do when every candidate has weight 0: fail-open (default; treat them as
		 * equal weights, log one WARN, count in atlas.weights.all.zero) or reject (no
		 * instance: the caller gets a 503, counted in atlas.weights.all.zero).
		 */
		private @Nullable AllZeroWeightsPolicy allZeroWeights;

		public @Nullable String getStrategy() {
			return this.strategy;
		}

		public void setStrategy(@Nullable String strategy) {
			this.strategy = (strategy == null || strategy.isBlank()) ? null
					: strategy.trim().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
		}

		public @Nullable AllZeroWeightsPolicy getAllZeroWeights() {
			return this.allZeroWeights;
		}

		public void setAllZeroWeights(@Nullable AllZeroWeightsPolicy allZeroWeights) {
			this.allZeroWeights = allZeroWeights;
		}

		String strategyOrDefault() {
			return (this.strategy != null) ? this.strategy : "weighted-random";
		}

		AllZeroWeightsPolicy allZeroWeightsOrDefault() {
			return (this.allZeroWeights != null) ? this.allZeroWeights : AllZeroWeightsPolicy.FAIL_OPEN;
		}

	}

	/**
	 * Overrides for one service; anything left unset falls back to the global atlas.*
	 * value.
	 */
	public static class Service {

		/** Choice settings of this service. */
		private final LoadBalancer loadbalancer = new LoadBalancer();

		/** Gray settings of this service. */
		private final ServiceGray gray = new ServiceGray();

		public LoadBalancer getLoadbalancer() {
			return this.loadbalancer;
		}

		public ServiceGray getGray() {
			return this.gray;
		}

	}

	/** Gray-tag routing. */
	public static class Gray {

		/**
		 * Whether requests are routed to lanes by gray tag. When false, every instance is
		 * a candidate.
		 */
		private boolean enabled = true;

		/** Request header naming the tag a request wants (e.g. X-Service-Version: v2). */
		private String header = GrayRules.DEFAULT_HEADER;

		/**
		 * Instance metadata key holding an instance's tag. Instances without it are
		 * untagged (baseline).
		 */
		private String metadataKey = MetadataKeys.DEFAULT_TAG;

		/**
		 * This application's own tag, wanted by its outbound calls when the request names
		 * none, so that a canary caller calls canary providers. Empty for none.
		 */
		private @Nullable String ownTag;

		/**
		 * Where a request goes when no instance carries the tag it wants: baseline
		 * (untagged or baseline-tag instances; all when there is none), all, or none (the
		 * caller gets a 503). Counted in atlas.gray.fallback.
		 */
		private GrayFallback fallback = GrayFallback.BASELINE;

		/**
		 * Whether requests that want no tag go to baseline instances only, never to
		 * tagged (canary) ones. When no baseline instance exists they go to all.
		 */
		private boolean isolateBaseline = true;

		/** Tags that count as baseline besides "no tag", e.g. v1. */
		private Set<String> baselineTags = new LinkedHashSet<>();

		/**
		 * Percentage canary for requests that want no tag, per service and tag: e.g.
		 * atlas.gray.weights.user-service.v2=10 sends 10 % of them to v2 instances.
		 */
		private Map<String, Map<String, Double>> weights = new LinkedHashMap<>();

		/**
		 * Request header whose value makes the percentage choice sticky: the same value
		 * (e.g. a user id) always lands in the same lane. Empty to choose at random per
		 * request.
		 */
		private @Nullable String hashKeyHeader;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getHeader() {
			return this.header;
		}

		public void setHeader(String header) {
			this.header = header;
		}

		public String getMetadataKey() {
			return this.metadataKey;
		}

		public void setMetadataKey(String metadataKey) {
			this.metadataKey = metadataKey;
		}

		public @Nullable String getOwnTag() {
			return this.ownTag;
		}

		public void setOwnTag(@Nullable String ownTag) {
			this.ownTag = ownTag;
		}

		public GrayFallback getFallback() {
			return this.fallback;
		}

		public void setFallback(GrayFallback fallback) {
			this.fallback = fallback;
		}

		public boolean isIsolateBaseline() {
			return this.isolateBaseline;
		}

		public void setIsolateBaseline(boolean isolateBaseline) {
			this.isolateBaseline = isolateBaseline;
		}

		public Set<String> getBaselineTags() {
			return this.baselineTags;
		}

		public void setBaselineTags(Set<String> baselineTags) {
			this.baselineTags = baselineTags;
		}

		public Map<String, Map<String, Double>> getWeights() {
			return this.weights;
		}

		public void setWeights(Map<String, Map<String, Double>> weights) {
			this.weights = weights;
		}

		public @Nullable String getHashKeyHeader() {
			return this.hashKeyHeader;
		}

		public void setHashKeyHeader(@Nullable String hashKeyHeader) {
			this.hashKeyHeader = hashKeyHeader;
		}

	}

	/** Gray overrides for one service; anything left unset falls back to atlas.gray.*. */
	public static class ServiceGray {

		/**
		 * Fallback when no instance of this service carries the wanted tag: baseline, all
		 * or none.
		 */
		private @Nullable GrayFallback fallback;

		/** Whether untagged requests to this service go to baseline instances only. */
		private @Nullable Boolean isolateBaseline;

		/** Baseline tags of this service. */
		private @Nullable Set<String> baselineTags;

		/**
		 * Percentage canary for this service: tag to percent of untagged requests, e.g.
		 * v2: 10.
		 */
		private Map<String, Double> weights = new LinkedHashMap<>();

		/** Hash-key header for this service's percentage canary. */
		private @Nullable String hashKeyHeader;

		public @Nullable GrayFallback getFallback() {
			return this.fallback;
		}

		public void setFallback(@Nullable GrayFallback fallback) {
			this.fallback = fallback;
		}

		public @Nullable Boolean getIsolateBaseline() {
			return this.isolateBaseline;
		}

		public void setIsolateBaseline(@Nullable Boolean isolateBaseline) {
			this.isolateBaseline = isolateBaseline;
		}

		public @Nullable Set<String> getBaselineTags() {
			return this.baselineTags;
		}

		public void setBaselineTags(@Nullable Set<String> baselineTags) {
			this.baselineTags = baselineTags;
		}

		public Map<String, Double> getWeights() {
			return this.weights;
		}

		public void setWeights(Map<String, Double> weights) {
			this.weights = weights;
		}

		public @Nullable String getHashKeyHeader() {
			return this.hashKeyHeader;
		}

		public void setHashKeyHeader(@Nullable String hashKeyHeader) {
			this.hashKeyHeader = hashKeyHeader;
		}

	}

	/** Propagation of routing headers. */
	public static class Propagation {

		/**
		 * Whether routing headers are carried from inbound requests to
		 * outbound @LoadBalanced calls, across threads (@Async, Spring executors) and
		 * reactive chains.
		 */
		private boolean enabled = true;

		/**
		 * Headers captured from inbound requests and written on outbound calls (when the
		 * outbound request does not set them itself). The gray header and the hash-key
		 * header are always included.
		 */
		private List<String> headers = new ArrayList<>(List.of(GrayRules.DEFAULT_HEADER));

		/**
		 * Whether Atlas turns on Reactor's automatic context propagation
		 * (Hooks.enableAutomaticContextPropagation), so that the routing context follows
		 * reactive chains across schedulers. Same effect as
		 * spring.reactor.context-propagation=auto.
		 */
		private boolean reactorAutomatic = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public List<String> getHeaders() {
			return this.headers;
		}

		public void setHeaders(List<String> headers) {
			this.headers = headers;
		}

		public boolean isReactorAutomatic() {
			return this.reactorAutomatic;
		}

		public void setReactorAutomatic(boolean reactorAutomatic) {
			this.reactorAutomatic = reactorAutomatic;
		}

	}

	/** Cluster affinity. */
	public static class Affinity {

		/** Whether calls prefer instances of the caller's own cluster. */
		private boolean enabled = true;

		/**
		 * The caller's own cluster or zone. Defaults to
		 * spring.cloud.nacos.discovery.cluster-name when set, else
		 * spring.cloud.loadbalancer.zone; empty turns affinity off. Compared
		 * case-insensitively with the instances' nacos.cluster or zone metadata.
		 */
		private @Nullable String cluster;

		/**
		 * Spill over to all clusters when fewer than this ratio (0..1) of the own
		 * cluster's registered instances are usable (not marked unhealthy).
		 */
		private double minHealthyRatio = 0.1;

		/**
		 * Spill over to all clusters when the own cluster has fewer usable instances than
		 * this.
		 */
		private int minInstances = 1;

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

	/** Warmup (slow start), Envoy's curve. */
	public static class Warmup {

		/** Whether new instances ramp up their weight. */
		private boolean enabled = true;

		/**
		 * Length of the ramp after an instance registers (or is first seen); 0 turns
		 * warmup off.
		 */
		private Duration duration = Duration.ofSeconds(60);

		/**
		 * Shape of the ramp: 1.0 is linear, larger values ramp faster early. Must be > 0.
		 */
		private double aggression = 1.0;

		/**
		 * Floor of the weight factor in percent (0..100), so a new instance is never
		 * starved.
		 */
		private double minWeightPercent = 10;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getDuration() {
			return this.duration;
		}

		public void setDuration(Duration duration) {
			this.duration = duration;
		}

		public double getAggression() {
			return this.aggression;
		}

		public void setAggression(double aggression) {
			this.aggression = aggression;
		}

		public double getMinWeightPercent() {
			return this.minWeightPercent;
		}

		public void setMinWeightPercent(double minWeightPercent) {
			this.minWeightPercent = minWeightPercent;
		}

	}

	/** Lossless online/offline. */
	public static class Lifecycle {

		/**
		 * Whether this application registers in its registry only once it is ready and
		 * accepting traffic (after every runner), instead of as soon as the web server is
		 * up. Its registration then carries atlas.registered-at, which callers use for
		 * warmup.
		 */
		private boolean registerWhenReady = true;

		/** Extra wait after readiness before registering (e.g. for caches to fill). */
		private Duration registerDelay = Duration.ZERO;

		/**
		 * Whether Atlas runs the shutdown sequence on SIGTERM or preStop: deregister,
		 * refuse traffic, drain, then let Spring Boot stop the web server gracefully.
		 */
		private boolean gracefulShutdown = true;

		/**
		 * How long to keep serving after deregistration, so callers notice (they refresh
		 * on registry events, or at their cache TTL) before the web server stops.
		 * Replaces Spring Cloud Alibaba's graceful-shutdown-wait-time.
		 */
		private Duration drain = Duration.ofSeconds(10);

		/**
		 * Longest wait for the registry to confirm deregistration (e.g. when it is
		 * unreachable).
		 */
		private Duration deregisterTimeout = Duration.ofSeconds(3);

		public boolean isRegisterWhenReady() {
			return this.registerWhenReady;
		}

		public void setRegisterWhenReady(boolean registerWhenReady) {
			this.registerWhenReady = registerWhenReady;
		}

		public Duration getRegisterDelay() {
			return this.registerDelay;
		}

		public boolean isGracefulShutdown() {
			return this.gracefulShutdown;
		}

		public void setGracefulShutdown(boolean gracefulShutdown) {
			this.gracefulShutdown = gracefulShutdown;
		}

		public Duration getDrain() {
			return this.drain;
		}

		public void setDrain(Duration drain) {
			this.drain = drain;
		}

		public Duration getDeregisterTimeout() {
			return this.deregisterTimeout;
		}

		public void setDeregisterTimeout(Duration deregisterTimeout) {
			this.deregisterTimeout = deregisterTimeout;
		}

		public void setRegisterDelay(Duration registerDelay) {
			this.registerDelay = registerDelay;
		}

	}

	/** Following the registry. */
	public static class Registry {

		/**
		 * Whether registry change events (Spring Cloud's HeartbeatEvent, e.g. ZooKeeper's
		 * watch) evict the load balancer's cached instance lists at once, instead of
		 * waiting for their TTL (spring.cloud.loadbalancer.cache.ttl, which stays as a
		 * safety net, measured from write).
		 */
		private boolean refreshOnEvents = true;

		/**
		 * How long an empty registry answer is replaced by the last non-empty instance
		 * list (an outage or a restarted registry node must not wipe the list); after
		 * that, an empty list is accepted. 0 accepts empty lists at once.
		 */
		private Duration staleLimit = Duration.ofSeconds(60);

		public boolean isRefreshOnEvents() {
			return this.refreshOnEvents;
		}

		public void setRefreshOnEvents(boolean refreshOnEvents) {
			this.refreshOnEvents = refreshOnEvents;
		}

		public Duration getStaleLimit() {
			return this.staleLimit;
		}

		public void setStaleLimit(Duration staleLimit) {
			this.staleLimit = staleLimit;
		}

	}

}
