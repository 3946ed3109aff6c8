package dev.atlas.loadbalancer.outlier;

/**
 * Envoy's success-rate outlier detection: every detection interval, among the instances
 * with at least {@code requestVolume} requests in it, when there are at least
 * {@code minimumHosts} of them, an instance whose success rate is below
 * {@code mean − stdevFactor × stdev} of theirs is ejected. An instance is an outlier only
 * when it is worse than its peers: a fault shared by every instance (a database down, a
 * request that fails everywhere) ejects only the instances that by chance fare worst in
 * an interval, not every instance in turn.
 *
 * <p>
 * The bar follows the spread of the rates, not how bad they are: with a small error rate
 * shared by every instance, an instance with two failures where its peers had none is
 * below it. Off by default in Atlas for that reason (Envoy enforces it): in a seeded
 * simulation of 20 healthy instances sharing a 0.2 % error rate, 150 requests each per
 * interval, 20 intervals ejected 10 ({@code PeerOutlierDetectionTest}). Turn it on for a
 * service with enough traffic per instance that a real outlier stands out from noise.
 * Immutable.
 *
 * @param enforcing the chance, in percent (0..100), that an instance found an outlier is
 * ejected; 0 (Atlas's default; Envoy's is 100) turns the detector off.
 * @param minimumHosts how many instances must have the request volume, {@code >= 1}.
 * Envoy's default 5.
 * @param requestVolume requests an instance needs in one interval to be judged,
 * {@code >= 1}. Envoy's default 100.
 * @param stdevFactor how many standard deviations below the mean an outlier is,
 * {@code >= 0}. Envoy's default 1.9 ({@code success_rate_stdev_factor: 1900}).
 * @since 0.1.0
 */
public record SuccessRateRules(int enforcing, int minimumHosts, int requestVolume, double stdevFactor) {

	/**
	 * Off; once turned on, Envoy's: 5 instances, 100 requests, 1.9 standard deviations.
	 */
	public static final SuccessRateRules DEFAULTS = new SuccessRateRules(0, 5, 100, 1.9);

	/**
	 * Validates.
	 * @throws IllegalArgumentException naming the property (relative to the outlier
	 * section) when a value is out of range
	 */
	public SuccessRateRules {
		if (enforcing < 0 || enforcing > 100) {
			throw new IllegalArgumentException(
					"success-rate.enforcing must be between 0 and 100 (0 turns it off), was " + enforcing);
		}
		if (minimumHosts < 1) {
			throw new IllegalArgumentException("success-rate.minimum-hosts must be >= 1, was " + minimumHosts);
		}
		if (requestVolume < 1) {
			throw new IllegalArgumentException("success-rate.request-volume must be >= 1, was " + requestVolume);
		}
		if (!(stdevFactor >= 0 && stdevFactor < Double.POSITIVE_INFINITY)) {
			throw new IllegalArgumentException("success-rate.stdev-factor must be >= 0, was " + stdevFactor);
		}
	}

}
