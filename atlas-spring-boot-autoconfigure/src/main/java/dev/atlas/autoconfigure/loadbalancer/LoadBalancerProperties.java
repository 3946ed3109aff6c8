package dev.atlas.autoconfigure.loadbalancer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.orca.WeightRules;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.stats.FailureStatuses;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The choice among candidate instances, {@code atlas.loadbalancer.*}; per service under
 * {@code atlas.services.<serviceId>.loadbalancer.*}. (Atlas's own section, not Spring
 * Cloud's {@code spring.cloud.loadbalancer} properties.) Mutable while being bound, not
 * thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = LoadBalancerProperties.PREFIX)
public class LoadBalancerProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".loadbalancer";

	/** The strategy of a service that names none. */
	public static final String DEFAULT_STRATEGY = "weighted-random";

	/**
	 * Name of the load-balancing strategy: weighted-random (default; O(1) per pick),
	 * smooth-round-robin (nginx's smooth weighted round robin), least-request (power of
	 * two choices by in-flight requests), peak-ewma (power of two choices by
	 * peak-sensitive response time × in-flight requests), ring-hash (consistent hashing
	 * of a header or cookie), weighted-round-robin (by the load the instances report,
	 * gRFC A58), or the name of a strategy the application registers. The built-in ones
	 * honour registry weights, but for weighted-round-robin, which weighs by reported
	 * load; weight 0 means drained for all. Read trimmed and lower-cased, with _ as -
	 * (SMOOTH_ROUND_ROBIN is smooth-round-robin); blank means the default. An unknown
	 * name fails startup.
	 */
	private String strategy = DEFAULT_STRATEGY;

	/**
	 * What to do when every candidate has weight 0: fail-open (default; treat them as
	 * equal weights, log one WARN, count in atlas.weights.all.zero) or reject (no
	 * instance: the caller gets a NoInstanceAvailableException, counted in
	 * atlas.weights.all.zero).
	 */
	private AllZeroWeightsPolicy allZeroWeights = AllZeroWeightsPolicy.FAIL_OPEN;

	/**
	 * HTTP statuses of an answer that count as a failure of the instance for the
	 * load-aware strategies (least-request, peak-ewma, ring-hash with bounded load): each
	 * a status (429) or a class (5xx). A failure never makes an instance look better: its
	 * duration does not lower the latency averages and its failure rate divides the
	 * instance's standing. Connect and read failures always count; an empty list makes no
	 * status a failure. Default 5xx and 429 (what rate limiters such as Sentinel answer
	 * at their limit).
	 */
	private List<String> failureStatuses = new ArrayList<>(FailureStatuses.DEFAULT_ENTRIES);

	/**
	 * Requests this caller may have in flight to any one instance of the service: an
	 * instance at the limit is skipped by every strategy, and when every candidate is at
	 * it the call fails at once with NoInstanceAvailableException (reason saturated),
	 * never retried, counted in atlas.saturated. 0 (default) is off; otherwise a positive
	 * number of requests.
	 */
	private int maxInFlightPerInstance = InFlightLimit.OFF;

	/** Settings of the least-request strategy. */
	private final LeastRequest leastRequest = new LeastRequest();

	/** Settings of the peak-ewma strategy. */
	private final PeakEwma peakEwma = new PeakEwma();

	/** Settings of the weighted-round-robin strategy. */
	private final WeightedRoundRobin weightedRoundRobin = new WeightedRoundRobin();

	/** Settings of the ring-hash strategy. */
	private final Hash hash = new Hash();

	@Override
	public void afterPropertiesSet() {
		maxInFlightPerInstance(PREFIX);
		failureStatuses(PREFIX);
		leastRequestRules(PREFIX);
		peakEwmaRules(PREFIX);
		weightedRoundRobinRules(PREFIX);
		hashRules(PREFIX);
	}

	/**
	 * The failure statuses of these values.
	 * @param prefix where these values were bound, e.g. {@code atlas.loadbalancer}
	 * @return the statuses
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public FailureStatuses failureStatuses(String prefix) {
		try {
			return FailureStatuses.of(this.failureStatuses);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + ".failure-statuses: " + ex.getMessage(), ex);
		}
	}

	/**
	 * The per-instance in-flight limit of these values.
	 * @param prefix where these values were bound, e.g. {@code atlas.loadbalancer}
	 * @return requests in flight per instance, {@code >= 1}, or {@link InFlightLimit#OFF}
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public int maxInFlightPerInstance(String prefix) {
		if (this.maxInFlightPerInstance < 0) {
			throw new IllegalArgumentException("Invalid " + prefix + ".max-in-flight-per-instance: "
					+ this.maxInFlightPerInstance + "; allowed: 0 (off) or a positive number of requests");
		}
		return this.maxInFlightPerInstance;
	}

	public int getMaxInFlightPerInstance() {
		return this.maxInFlightPerInstance;
	}

	public void setMaxInFlightPerInstance(int maxInFlightPerInstance) {
		this.maxInFlightPerInstance = maxInFlightPerInstance;
	}

	public List<String> getFailureStatuses() {
		return this.failureStatuses;
	}

	public void setFailureStatuses(List<String> failureStatuses) {
		this.failureStatuses = failureStatuses;
	}

	/**
	 * The least-request rules of these values.
	 * @param prefix where these values were bound, e.g. {@code atlas.loadbalancer}
	 * @return the rules
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public LeastRequestRules leastRequestRules(String prefix) {
		try {
			return new LeastRequestRules(this.leastRequest.choiceCount, this.leastRequest.activeRequestBias);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + ".least-request." + ex.getMessage(), ex);
		}
	}

	/**
	 * The peak-ewma rules of these values.
	 * @param prefix where these values were bound, e.g. {@code atlas.loadbalancer}
	 * @return the rules
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public PeakEwmaRules peakEwmaRules(String prefix) {
		try {
			return new PeakEwmaRules(this.peakEwma.choiceCount, this.peakEwma.decayTime);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + ".peak-ewma." + ex.getMessage(), ex);
		}
	}

	/**
	 * The weighted-round-robin rules of these values.
	 * @param prefix where these values were bound, e.g. {@code atlas.loadbalancer}
	 * @return the rules
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public WeightRules weightedRoundRobinRules(String prefix) {
		WeightedRoundRobin values = this.weightedRoundRobin;
		try {
			return new WeightRules(values.blackoutPeriod, values.weightExpirationPeriod, values.weightUpdatePeriod,
					values.errorUtilizationPenalty);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + ".weighted-round-robin." + ex.getMessage(), ex);
		}
	}

	/**
	 * The ring-hash rules of these values.
	 * @param prefix where these values were bound, e.g. {@code atlas.loadbalancer}
	 * @return the rules
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public HashRules hashRules(String prefix) {
		try {
			return new HashRules(this.hash.header, this.hash.cookie, this.hash.virtualNodes, this.hash.boundedLoad,
					this.hash.loadFactor);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + ".hash." + ex.getMessage(), ex);
		}
	}

	public LeastRequest getLeastRequest() {
		return this.leastRequest;
	}

	public PeakEwma getPeakEwma() {
		return this.peakEwma;
	}

	public WeightedRoundRobin getWeightedRoundRobin() {
		return this.weightedRoundRobin;
	}

	public Hash getHash() {
		return this.hash;
	}

	/**
	 * The strategy name, normalized.
	 * @return kebab-case, lower-case, never blank
	 */
	public String getStrategy() {
		return this.strategy;
	}

	/**
	 * Sets the strategy name; it is normalized ({@link #normalizeStrategy(String)}), not
	 * checked: strategies are registered by name elsewhere.
	 * @param strategy a name; {@code null} or blank leaves the value as it is (the
	 * default, or under {@code atlas.services.<service-id>} the global value)
	 */
	public void setStrategy(@Nullable String strategy) {
		if (strategy != null && !strategy.isBlank()) {
			this.strategy = normalizeStrategy(strategy);
		}
	}

	public AllZeroWeightsPolicy getAllZeroWeights() {
		return this.allZeroWeights;
	}

	public void setAllZeroWeights(AllZeroWeightsPolicy allZeroWeights) {
		this.allZeroWeights = allZeroWeights;
	}

	/**
	 * The canonical spelling of a strategy name, as configured names are compared with
	 * registered ones: trimmed, lower-cased ({@link Locale#ROOT}), {@code _} read as
	 * {@code -}.
	 * @param name a name as written, may be {@code null}
	 * @return e.g. {@code smooth-round-robin} for {@code " SMOOTH_ROUND_ROBIN"};
	 * {@link #DEFAULT_STRATEGY} for {@code null} or blank
	 */
	public static String normalizeStrategy(@Nullable String name) {
		if (name == null || name.isBlank()) {
			return DEFAULT_STRATEGY;
		}
		return name.trim().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/** Settings of the least-request strategy. */
	public static class LeastRequest {

		/**
		 * Candidates drawn (by weight) and compared per pick, at least 2. 2 by default,
		 * the power of two choices (Envoy's default).
		 */
		private int choiceCount = LeastRequestRules.DEFAULTS.choiceCount();

		/**
		 * How strongly in-flight requests count against weight, 0 or more: an instance
		 * ranks by in-flight^bias / weight, lower first. 1.0 by default (Envoy's); 0
		 * ignores in-flight requests (weighted random).
		 */
		private double activeRequestBias = LeastRequestRules.DEFAULTS.activeRequestBias();

		public int getChoiceCount() {
			return this.choiceCount;
		}

		public void setChoiceCount(int choiceCount) {
			this.choiceCount = choiceCount;
		}

		public double getActiveRequestBias() {
			return this.activeRequestBias;
		}

		public void setActiveRequestBias(double activeRequestBias) {
			this.activeRequestBias = activeRequestBias;
		}

	}

	/** Settings of the peak-ewma strategy. */
	public static class PeakEwma {

		/**
		 * Candidates drawn (by weight) and compared per pick, at least 2. 2 by default.
		 */
		private int choiceCount = PeakEwmaRules.DEFAULTS.choiceCount();

		/**
		 * How fast the response-time average forgets a peak, at least 1ms: after this
		 * long without a response a past peak counts for 37 % (1/e). 10s by default
		 * (Finagle's and Linkerd's).
		 */
		private Duration decayTime = PeakEwmaRules.DEFAULTS.decayTime();

		public int getChoiceCount() {
			return this.choiceCount;
		}

		public void setChoiceCount(int choiceCount) {
			this.choiceCount = choiceCount;
		}

		public Duration getDecayTime() {
			return this.decayTime;
		}

		public void setDecayTime(Duration decayTime) {
			this.decayTime = decayTime;
		}

	}

	/**
	 * Settings of the weighted-round-robin strategy: how the load the instances report
	 * becomes weights (gRFC A58's defaults).
	 */
	public static class WeightedRoundRobin {

		/**
		 * How long an instance must have reported its load before its weight is used, at
		 * least 0s; until then it gets the mean of the others'. 10s by default (gRFC A58:
		 * avoids churn when instances come and go).
		 */
		private Duration blackoutPeriod = WeightRules.DEFAULTS.blackoutPeriod();

		/**
		 * How long a weight is used after the instance's last report, more than 0s; then
		 * the instance gets the mean again and its blackout starts over. 3m by default
		 * (gRFC A58).
		 */
		private Duration weightExpirationPeriod = WeightRules.DEFAULTS.weightExpirationPeriod();

		/**
		 * How often the weights are recomputed from the latest reports, at least 100ms.
		 * 1s by default (gRFC A58).
		 */
		private Duration weightUpdatePeriod = WeightRules.DEFAULTS.weightUpdatePeriod();

		/**
		 * How much the error rate (errors ÷ requests per second) adds to an instance's
		 * utilization, at least 0. 1.0 by default (gRFC A58).
		 */
		private double errorUtilizationPenalty = WeightRules.DEFAULTS.errorUtilizationPenalty();

		public Duration getBlackoutPeriod() {
			return this.blackoutPeriod;
		}

		public void setBlackoutPeriod(Duration blackoutPeriod) {
			this.blackoutPeriod = blackoutPeriod;
		}

		public Duration getWeightExpirationPeriod() {
			return this.weightExpirationPeriod;
		}

		public void setWeightExpirationPeriod(Duration weightExpirationPeriod) {
			this.weightExpirationPeriod = weightExpirationPeriod;
		}

		public Duration getWeightUpdatePeriod() {
			return this.weightUpdatePeriod;
		}

		public void setWeightUpdatePeriod(Duration weightUpdatePeriod) {
			this.weightUpdatePeriod = weightUpdatePeriod;
		}

		public double getErrorUtilizationPenalty() {
			return this.errorUtilizationPenalty;
		}

		public void setErrorUtilizationPenalty(double errorUtilizationPenalty) {
			this.errorUtilizationPenalty = errorUtilizationPenalty;
		}

	}

	/** Settings of the ring-hash strategy. */
	public static class Hash {

		/**
		 * Request header whose value is the hash key, e.g. X-User-Id; read from the
		 * outbound request, else from the inbound request when the header is propagated
		 * (atlas.propagation.headers).
		 */
		private @Nullable String header;

		/**
		 * Cookie of the outbound request whose value is the hash key, used when the
		 * header is absent, e.g. a user or tenant cookie. Not a session cookie that the
		 * instances issue themselves (JSESSIONID): its value is only known after the
		 * first instance answered, and hashes to another instance.
		 */
		private @Nullable String cookie;

		/**
		 * Points on the ring per instance of average weight, at least 1; an instance gets
		 * this many × its weight / the average weight. 160 by default (ketama's and
		 * Dubbo's).
		 */
		private int virtualNodes = HashRules.DEFAULT_VIRTUAL_NODES;

		/**
		 * Whether consistent hashing with bounded loads applies: an instance with
		 * load-factor × the average in-flight requests (by weight) is passed over for the
		 * next one on the ring, so a hot key cannot overload it.
		 */
		private boolean boundedLoad;

		/** The bound of bounded-load, above 1. 1.25 by default. */
		private double loadFactor = HashRules.DEFAULT_LOAD_FACTOR;

		public @Nullable String getHeader() {
			return this.header;
		}

		public void setHeader(@Nullable String header) {
			this.header = header;
		}

		public @Nullable String getCookie() {
			return this.cookie;
		}

		public void setCookie(@Nullable String cookie) {
			this.cookie = cookie;
		}

		public int getVirtualNodes() {
			return this.virtualNodes;
		}

		public void setVirtualNodes(int virtualNodes) {
			this.virtualNodes = virtualNodes;
		}

		public boolean isBoundedLoad() {
			return this.boundedLoad;
		}

		public void setBoundedLoad(boolean boundedLoad) {
			this.boundedLoad = boundedLoad;
		}

		public double getLoadFactor() {
			return this.loadFactor;
		}

		public void setLoadFactor(double loadFactor) {
			this.loadFactor = loadFactor;
		}

	}

}
