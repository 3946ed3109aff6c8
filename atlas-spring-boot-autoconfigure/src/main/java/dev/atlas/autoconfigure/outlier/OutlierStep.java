package dev.atlas.autoconfigure.outlier;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.support.InstanceProbe;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.ssl.SslBundles;

/**
 * Outlier detection under new rules: the service's detector takes them in place, keeping
 * its failure counts and ejections ({@link OutlierDetector#update}), with a new probe; a
 * new ejection filter applies them (Atlas's, when it is in the service's routing).
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class OutlierStep implements RuntimeStep {

	private final @Nullable OutlierDetector detector;

	private volatile @Nullable OutlierEjection current;

	private final @Nullable SslBundles sslBundles;

	/**
	 * Creates the step.
	 * @param detector the service's detector, or {@code null} when there is none
	 * @param ejection the ejection filter Atlas built for the service, or {@code null}
	 * @param sslBundles the application's SSL bundles (for
	 * {@code atlas.outlier.probe.ssl-bundle}), or {@code null} when it has none
	 */
	public OutlierStep(@Nullable OutlierDetector detector, @Nullable OutlierEjection ejection,
			@Nullable SslBundles sslBundles) {
		this.detector = detector;
		this.current = ejection;
		this.sslBundles = sslBundles;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		OutlierDetector outliers = this.detector;
		if (outliers == null || !change.changed(OutlierSection.SECTION)) {
			return null;
		}
		OutlierRules rules = change.rules(OutlierSection.SECTION);
		InstanceProbe probe = ProbeBundles.probe(rules.probe(), this.sslBundles);
		OutlierEjection ejection = this.current;
		if (ejection == null || !change.inForce(ejection)) {
			return Rebuild.state(() -> outliers.update(rules, probe));
		}
		return Rebuild.replacing(ejection, () -> {
			outliers.update(rules, probe);
			OutlierEjection next = new OutlierEjection(outliers);
			this.current = next;
			return next;
		});
	}

}
