package dev.atlas.loadbalancer.outlier;

/**
 * Envoy's failure-percentage outlier detection: every detection interval, among the
 * instances with at least {@code requestVolume} requests in it, when there are at least
 * {@code minimumHosts} of them, an instance whose share of failed requests is at least
 * {@code threshold} percent is ejected. Off by default, as in Envoy: it judges an
 * instance by a fixed bar, not by its peers, so a fault shared by every instance ejects
 * them in turn up to {@code max-ejection-percent}; it suits services too small or too
 * uneven for success-rate detection's statistics.
 *
 * <p>
 * Immutable.
 *
 * @param enforcing the chance, in percent (0..100), that an instance above the threshold
 * is ejected; 0 turns the detector off. Envoy's default 0.
 * @param threshold failed requests, in percent of an instance's requests in the interval
 * (0..100), from which it is ejected. Envoy's default 85.
 * @param minimumHosts how many instances must have the request volume, {@code >= 1}.
 * Envoy's default 5.
 * @param requestVolume requests an instance needs in one interval to be judged,
 * {@code >= 1}. Envoy's default 50.
 * @since 0.1.0
 */
public record FailurePercentageRules(int enforcing, int threshold, int minimumHosts, int requestVolume) {

	/** Envoy's defaults: off; 85 %, 5 instances, 50 requests once turned on. */
	public static final FailurePercentageRules DEFAULTS = new FailurePercentageRules(0, 85, 5, 50);

	/**
	 * Validates.
	 * @throws IllegalArgumentException naming the property (relative to the outlier
	 * section) when a value is out of range
	 */
	public FailurePercentageRules {
		if (enforcing < 0 || enforcing > 100) {
			throw new IllegalArgumentException(
					"failure-percentage.enforcing must be between 0 and 100 (0 turns it off), was " + enforcing);
		}
		if (threshold < 0 || threshold > 100) {
			throw new IllegalArgumentException(
					"failure-percentage.threshold must be between 0 and 100, was " + threshold);
		}
		if (minimumHosts < 1) {
			throw new IllegalArgumentException("failure-percentage.minimum-hosts must be >= 1, was " + minimumHosts);
		}
		if (requestVolume < 1) {
			throw new IllegalArgumentException("failure-percentage.request-volume must be >= 1, was " + requestVolume);
		}
	}

}
