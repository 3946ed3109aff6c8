package dev.atlas.loadbalancer.outlier;

import java.time.Clock;
import java.util.concurrent.ThreadLocalRandom;

import dev.atlas.loadbalancer.support.InstanceProbe;
import dev.atlas.loadbalancer.support.Scheduler;

/**
 * The probing of one service's ejected instances, off the request path (Envoy's active
 * health checking of ejected hosts, reduced to what outlier detection needs): once an
 * instance's ejection time is over, it is probed ({@link InstanceProbe} on the
 * {@link Scheduler}) every probe interval with 10 % jitter, and returns at the first
 * probe that passes (with probe type {@code none}: at once). Probing an instance stops
 * when it returns, when the registry no longer lists it, when the service has not been
 * called for {@code max-ejection-time} (then it is forgotten, not probed any more), and
 * when the detector closes.
 *
 * <p>
 * Times are milliseconds of the detector's {@link Clock}. Thread-safe: each ejected
 * instance has one chain of probes (each schedules the next), run on the scheduler's
 * thread; the decisions that change the detector's state take its lock.
 */
final class Prober {

	private final OutlierDetector detector;

	private final Ejector ejector;

	private final Clock clock;

	private final Scheduler scheduler;

	/**
	 * @param detector the rules and their probe, the traffic, whether it is closed
	 * @param ejector whose ejected instances are probed, and told of the outcome
	 * @param clock the detector's clock
	 * @param scheduler runs the probes
	 */
	Prober(OutlierDetector detector, Ejector ejector, Clock clock, Scheduler scheduler) {
		this.detector = detector;
		this.ejector = ejector;
		this.clock = clock;
		this.scheduler = scheduler;
	}

	/**
	 * Starts probing a freshly ejected instance once its ejection time is over.
	 * @param ejected the instance
	 * @param until the end of its ejection time, epoch ms
	 */
	void ejected(TrackedInstance ejected, long until) {
		schedule(ejected, ejected.ejections, until - this.clock.millis() + jitter());
	}

	/** Up to 10 % of the probe interval, in ms. */
	private long jitter() {
		long interval = this.detector.rules().probe().interval().toMillis();
		return ThreadLocalRandom.current().nextLong(interval / 10 + 1);
	}

	private void schedule(TrackedInstance instance, int ejection, long delayMillis) {
		if (!this.detector.isClosed()) {
			this.scheduler.schedule(() -> probe(instance, ejection), Math.max(0, delayMillis));
		}
	}

	/**
	 * One probe of an ejected instance, run on the scheduler: too early, it waits for the
	 * end of the ejection; then it returns the instance when the probe passes, else tries
	 * again one interval (± 10 %) later.
	 * @param instance the instance, as ejected
	 * @param ejection which of its ejections this chain serves
	 */
	void probe(TrackedInstance instance, int ejection) {
		OutlierDetector detector = this.detector;
		Ejector ejector = this.ejector;
		if (detector.isClosed() || ejector.ejected().get(instance.key) != instance || instance.ejections != ejection) {
			return;
		}
		long now = this.clock.millis();
		if (now < instance.ejectedUntil) {
			schedule(instance, ejection, instance.ejectedUntil - now + jitter());
			return;
		}
		if (!ejector.listed(instance.key)) {
			ejector.forget(instance, "it is no longer listed by the registry", true);
			return;
		}
		long calls = detector.traffic();
		if (calls != instance.callsSeen) {
			instance.callsSeen = calls;
			instance.idleSince = now;
		}
		else if (now - instance.idleSince >= detector.rules().maxEjectionTime().toMillis()) {
			ejector.forget(instance, "the service has not been called for " + (now - instance.idleSince)
					+ " ms; probing stops and the next request may choose it", false);
			return;
		}
		// The rules and their probe as one pair, as put in force together.
		OutlierDetector.Config config = detector.config();
		OutlierRules rules = config.rules();
		ProbeType type = rules.probe().type();
		boolean passed = type == ProbeType.NONE || config.probe().probe(instance.instance);
		if (type != ProbeType.NONE) {
			detector.meters().probed(passed);
		}
		if (passed) {
			ejector.bringBack(instance, type);
		}
		else {
			instance.failedProbes++;
			long interval = rules.probe().interval().toMillis();
			schedule(instance, ejection, interval - interval / 10 + 2 * jitter());
		}
	}

}
