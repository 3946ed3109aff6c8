package dev.atlas.loadbalancer.outlier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.random.RandomGenerator;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Envoy's success-rate and failure-percentage outlier detection over one interval's
 * counts, as Envoy's {@code DetectorImpl} defines them: success rate = successes ÷
 * requests; among the instances with the request volume (and at least the minimum number
 * of them), an outlier by success rate is below {@code mean − stdevFactor × stdev}
 * (population standard deviation), an outlier by failure percentage at or above the
 * threshold. Each found outlier is ejected with the detector's enforcing chance.
 * Stateless.
 */
final class PeerJudgement {

	private PeerJudgement() {
	}

	/**
	 * The outliers of one interval.
	 * @param counted each instance's successes and failures in the interval
	 * @param rules the detectors' thresholds
	 * @param interval the interval's length, for the log line
	 * @param random draws the enforcing chance
	 * @return the instances to eject, success-rate ones first, each once
	 */
	static List<Verdict> judge(List<Counted> counted, OutlierRules rules, Duration interval, RandomGenerator random) {
		List<Verdict> verdicts = new ArrayList<>();
		SuccessRateRules successRate = rules.successRate();
		if (successRate.enforcing() > 0) {
			List<Counted> judged = withVolume(counted, successRate.requestVolume());
			if (judged.size() >= successRate.minimumHosts()) {
				double mean = 0;
				for (Counted c : judged) {
					mean += c.successRate();
				}
				mean /= judged.size();
				double variance = 0;
				for (Counted c : judged) {
					variance += (c.successRate() - mean) * (c.successRate() - mean);
				}
				double stdev = Math.sqrt(variance / judged.size());
				double threshold = mean - successRate.stdevFactor() * stdev;
				for (Counted c : judged) {
					if (c.successRate() < threshold && random.nextInt(100) < successRate.enforcing()) {
						verdicts.add(new Verdict(c.instance(), OutlierDetector.REASON_SUCCESS_RATE,
								String.format(Locale.ROOT,
										"a success rate of %.1f %% over %d requests in %d ms, below %.1f %% (mean"
												+ " %.1f %% − %s × stdev %.1f %% of %d instances) (success-rate)",
										100 * c.successRate(), c.requests(), interval.toMillis(), 100 * threshold,
										100 * mean, successRate.stdevFactor(), 100 * stdev, judged.size())));
					}
				}
			}
		}
		FailurePercentageRules failurePercentage = rules.failurePercentage();
		if (failurePercentage.enforcing() > 0) {
			List<Counted> judged = withVolume(counted, failurePercentage.requestVolume());
			if (judged.size() >= failurePercentage.minimumHosts()) {
				for (Counted c : judged) {
					double percent = 100 * (1 - c.successRate());
					if (percent >= failurePercentage.threshold() && !judgedAlready(verdicts, c.instance())
							&& random.nextInt(100) < failurePercentage.enforcing()) {
						verdicts.add(new Verdict(c.instance(), OutlierDetector.REASON_FAILURE_PERCENTAGE,
								String.format(Locale.ROOT,
										"%.1f %% failed of %d requests in %d ms, at least %d %% (failure-percentage)",
										percent, c.requests(), interval.toMillis(), failurePercentage.threshold())));
					}
				}
			}
		}
		return verdicts;
	}

	private static List<Counted> withVolume(List<Counted> counted, int volume) {
		List<Counted> judged = new ArrayList<>(counted.size());
		for (Counted c : counted) {
			if (c.requests() >= volume) {
				judged.add(c);
			}
		}
		return judged;
	}

	private static boolean judgedAlready(List<Verdict> verdicts, ServiceInstance instance) {
		for (Verdict verdict : verdicts) {
			if (verdict.instance() == instance) {
				return true;
			}
		}
		return false;
	}

	/**
	 * One instance's outcomes in an interval.
	 *
	 * @param instance the instance as last seen
	 * @param successes requests it answered without failing
	 * @param failures requests it failed (5xx answers and gateway failures)
	 */
	record Counted(ServiceInstance instance, long successes, long failures) {

		long requests() {
			return this.successes + this.failures;
		}

		/** Successes ÷ requests, 0..1. */
		double successRate() {
			return (double) this.successes / requests();
		}

	}

	/**
	 * An instance to eject.
	 *
	 * @param instance the instance
	 * @param reason the detector's reason tag
	 * @param why what it did, for the log line
	 */
	record Verdict(ServiceInstance instance, String reason, String why) {
	}

}
