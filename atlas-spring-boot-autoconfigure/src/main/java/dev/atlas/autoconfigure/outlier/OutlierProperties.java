package dev.atlas.autoconfigure.outlier;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.outlier.FailurePercentageRules;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.outlier.ProbeRules;
import dev.atlas.loadbalancer.outlier.ProbeType;
import dev.atlas.loadbalancer.outlier.SuccessRateRules;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Outlier detection, {@code atlas.outlier.*}, after Envoy's: instances that fail several
 * requests in a row are ejected for a while, probed, and returned when a probe passes.
 * Per service under {@code atlas.services.<serviceId>.outlier.*}. Mutable while being
 * bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = OutlierProperties.PREFIX)
public class OutlierProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".outlier";

	/** Whether instances that fail requests in a row are ejected. */
	private boolean enabled = true;

	/**
	 * Ejects an instance after this many 5xx answers in a row (gateway failures
	 * included); 0 turns this detector off. 5 by default (Envoy's).
	 */
	private int consecutive5xx = 5;

	/**
	 * Ejects an instance after this many gateway failures in a row: connection refused or
	 * timed out, read timeout, connection reset, 502, 503, 504; 0 turns this detector
	 * off. 5 by default (Envoy's).
	 */
	private int consecutiveGatewayFailure = 5;

	/**
	 * An ejection lasts this long times the number of times the instance was ejected
	 * (less one per base ejection time it has since spent back in service). 30s by
	 * default (Envoy's).
	 */
	private Duration baseEjectionTime = Duration.ofSeconds(30);

	/** Cap of one ejection; at least base-ejection-time. 300s by default (Envoy's). */
	private Duration maxEjectionTime = Duration.ofSeconds(300);

	/**
	 * At most this share of a service's instances, in percent (0..100), is ejected at
	 * once: a true limit (0 ejects nothing). 50 by default: with 2 or 3 instances one may
	 * be ejected. Envoy's default 10 would turn ejection off below 10 instances; set it
	 * for a large service, where a fault hitting many instances is more likely the
	 * caller's own or the network's.
	 */
	private double maxEjectionPercent = 50;

	/**
	 * When fewer than this share, in percent (0..100), of a lane's instances would remain
	 * after ejection, ejection is ignored for that lane (panic mode: better to spread
	 * load over every instance than to overload the few left); 0 never panics. 50 by
	 * default (Envoy's).
	 */
	private double panicThresholdPercent = 50;

	/** How an ejected instance is probed once its ejection time is over. */
	private final Probe probe = new Probe();

	/**
	 * How often success-rate and failure-percentage detection judge the instances, over
	 * the requests of the interval. 10s by default (Envoy's).
	 */
	private Duration interval = OutlierRules.DEFAULT_INTERVAL;

	/**
	 * Success-rate detection: an instance whose success rate is below its peers' mean
	 * less stdev-factor standard deviations is ejected (Envoy's; off by default).
	 */
	private final SuccessRate successRate = new SuccessRate();

	/**
	 * Failure-percentage detection: an instance with at least this share of failed
	 * requests is ejected (Envoy's; off by default).
	 */
	private final FailurePercentage failurePercentage = new FailurePercentage();

	/**
	 * Validates the global values.
	 * @throws IllegalArgumentException naming the property when a value is out of range
	 */
	@Override
	public void afterPropertiesSet() {
		toRules(PREFIX);
	}

	/**
	 * The outlier rules of these values.
	 * @param prefix where these values were bound, for the message, e.g.
	 * {@code atlas.outlier} or {@code atlas.services.user-service.outlier}
	 * @return {@link OutlierRules} with {@code enabled} as set (checked even when
	 * disabled)
	 * @throws IllegalArgumentException naming the property when a value is out of range,
	 * with the allowed values
	 */
	public OutlierRules toRules(String prefix) {
		try {
			return new OutlierRules(this.enabled, this.consecutive5xx, this.consecutiveGatewayFailure,
					this.baseEjectionTime, this.maxEjectionTime, this.maxEjectionPercent, this.panicThresholdPercent,
					new ProbeRules(this.probe.type, this.probe.interval, this.probe.timeout, this.probe.path,
							this.probe.sslBundle, this.probe.serverName),
					this.interval,
					new SuccessRateRules(this.successRate.enforcing, this.successRate.minimumHosts,
							this.successRate.requestVolume, this.successRate.stdevFactor),
					new FailurePercentageRules(this.failurePercentage.enforcing, this.failurePercentage.threshold,
							this.failurePercentage.minimumHosts, this.failurePercentage.requestVolume));
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + "." + ex.getMessage(), ex);
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(
					"Invalid " + prefix + ": a duration is too long to be counted in "
							+ "milliseconds (base-ejection-time, max-ejection-time, probe.interval, probe.timeout)",
					ex);
		}
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public int getConsecutive5xx() {
		return this.consecutive5xx;
	}

	public void setConsecutive5xx(int consecutive5xx) {
		this.consecutive5xx = consecutive5xx;
	}

	public int getConsecutiveGatewayFailure() {
		return this.consecutiveGatewayFailure;
	}

	public void setConsecutiveGatewayFailure(int consecutiveGatewayFailure) {
		this.consecutiveGatewayFailure = consecutiveGatewayFailure;
	}

	public Duration getBaseEjectionTime() {
		return this.baseEjectionTime;
	}

	public void setBaseEjectionTime(Duration baseEjectionTime) {
		this.baseEjectionTime = baseEjectionTime;
	}

	public Duration getMaxEjectionTime() {
		return this.maxEjectionTime;
	}

	public void setMaxEjectionTime(Duration maxEjectionTime) {
		this.maxEjectionTime = maxEjectionTime;
	}

	public double getMaxEjectionPercent() {
		return this.maxEjectionPercent;
	}

	public void setMaxEjectionPercent(double maxEjectionPercent) {
		this.maxEjectionPercent = maxEjectionPercent;
	}

	public double getPanicThresholdPercent() {
		return this.panicThresholdPercent;
	}

	public void setPanicThresholdPercent(double panicThresholdPercent) {
		this.panicThresholdPercent = panicThresholdPercent;
	}

	public Probe getProbe() {
		return this.probe;
	}

	public Duration getInterval() {
		return this.interval;
	}

	public void setInterval(Duration interval) {
		this.interval = interval;
	}

	public SuccessRate getSuccessRate() {
		return this.successRate;
	}

	public FailurePercentage getFailurePercentage() {
		return this.failurePercentage;
	}

	/** How an ejected instance is probed. */
	public static class Probe {

		/**
		 * What a probe does: tcp (connect to host:port), http (GET the path; 2xx passes;
		 * finds hung instances that still accept connections) or none (return when the
		 * ejection time is over).
		 */
		private ProbeType type = ProbeType.TCP;

		/**
		 * Time between two probes of an ejected instance (10 % jitter). 5s by default.
		 */
		private Duration interval = Duration.ofSeconds(5);

		/** How long one probe may take. 1s by default. */
		private Duration timeout = Duration.ofSeconds(1);

		/** Path an http probe requests on the instance. */
		private String path = "/actuator/health";

		/**
		 * Name of the Spring SSL bundle (spring.ssl.bundle.*) whose trust material (and
		 * key, for mutual TLS) an http probe of a secure instance (registered as secure,
		 * or with an https scheme) uses. Empty: the JVM's default trust store.
		 */
		private String sslBundle = "";

		/**
		 * Host name an http probe of a secure instance sends as SNI and checks the
		 * instance's certificate against, for instances registered by IP address whose
		 * certificates name a host (e.g. user-service.internal). Empty: the registered
		 * host is checked (an IP address then needs an IP entry in the certificate).
		 */
		private String serverName = "";

		public ProbeType getType() {
			return this.type;
		}

		public void setType(ProbeType type) {
			this.type = type;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

		public String getSslBundle() {
			return this.sslBundle;
		}

		public void setSslBundle(String sslBundle) {
			this.sslBundle = sslBundle;
		}

		public String getServerName() {
			return this.serverName;
		}

		public void setServerName(String serverName) {
			this.serverName = serverName;
		}

	}

	/** Envoy's success-rate outlier detection. */
	public static class SuccessRate {

		/**
		 * Chance, in percent (0..100), that an instance found an outlier is ejected; 0
		 * (the default; Envoy's is 100) turns success-rate detection off: at small shared
		 * error rates its bar ejects healthy instances on noise.
		 */
		private int enforcing = SuccessRateRules.DEFAULTS.enforcing();

		/**
		 * Instances with the request volume needed for a judgement. 5 by default
		 * (Envoy's): with the default stdev-factor, fewer can never show an outlier.
		 */
		private int minimumHosts = SuccessRateRules.DEFAULTS.minimumHosts();

		/** Requests an instance needs in one interval to be judged. 100 by default. */
		private int requestVolume = SuccessRateRules.DEFAULTS.requestVolume();

		/**
		 * An outlier's success rate is below the mean less this many standard deviations.
		 * 1.9 by default (Envoy's success_rate_stdev_factor 1900).
		 */
		private double stdevFactor = SuccessRateRules.DEFAULTS.stdevFactor();

		public int getEnforcing() {
			return this.enforcing;
		}

		public void setEnforcing(int enforcing) {
			this.enforcing = enforcing;
		}

		public int getMinimumHosts() {
			return this.minimumHosts;
		}

		public void setMinimumHosts(int minimumHosts) {
			this.minimumHosts = minimumHosts;
		}

		public int getRequestVolume() {
			return this.requestVolume;
		}

		public void setRequestVolume(int requestVolume) {
			this.requestVolume = requestVolume;
		}

		public double getStdevFactor() {
			return this.stdevFactor;
		}

		public void setStdevFactor(double stdevFactor) {
			this.stdevFactor = stdevFactor;
		}

	}

	/** Envoy's failure-percentage outlier detection. */
	public static class FailurePercentage {

		/**
		 * Chance, in percent (0..100), that an instance above the threshold is ejected; 0
		 * (the default, Envoy's) turns failure-percentage detection off.
		 */
		private int enforcing = FailurePercentageRules.DEFAULTS.enforcing();

		/**
		 * Failed requests, in percent of an instance's requests in the interval (0..100),
		 * from which it is ejected. 85 by default (Envoy's).
		 */
		private int threshold = FailurePercentageRules.DEFAULTS.threshold();

		/** Instances with the request volume needed for a judgement. 5 by default. */
		private int minimumHosts = FailurePercentageRules.DEFAULTS.minimumHosts();

		/** Requests an instance needs in one interval to be judged. 50 by default. */
		private int requestVolume = FailurePercentageRules.DEFAULTS.requestVolume();

		public int getEnforcing() {
			return this.enforcing;
		}

		public void setEnforcing(int enforcing) {
			this.enforcing = enforcing;
		}

		public int getThreshold() {
			return this.threshold;
		}

		public void setThreshold(int threshold) {
			this.threshold = threshold;
		}

		public int getMinimumHosts() {
			return this.minimumHosts;
		}

		public void setMinimumHosts(int minimumHosts) {
			this.minimumHosts = minimumHosts;
		}

		public int getRequestVolume() {
			return this.requestVolume;
		}

		public void setRequestVolume(int requestVolume) {
			this.requestVolume = requestVolume;
		}

	}

}
