package dev.atlas.autoconfigure.outlier;

import java.util.Map;

import dev.atlas.loadbalancer.outlier.ProbeRules;
import dev.atlas.loadbalancer.outlier.Probes;
import dev.atlas.loadbalancer.support.InstanceProbe;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * Outlier probes with the TLS material of the Spring SSL bundle their rules name
 * ({@code atlas.outlier.probe.ssl-bundle}). Stateless.
 *
 * @since 0.1.0
 */
public final class ProbeBundles {

	private ProbeBundles() {
	}

	/**
	 * The probe of some rules.
	 * @param rules the probe rules
	 * @param bundles the application's SSL bundles, or {@code null} when it has none
	 * @return the probe, over TLS with the bundle's context for secure instances when the
	 * rules name a bundle
	 * @throws IllegalArgumentException naming the property when the bundle does not exist
	 */
	public static InstanceProbe probe(ProbeRules rules, @Nullable SslBundles bundles) {
		String name = rules.sslBundle();
		if (name.isEmpty()) {
			return Probes.of(rules);
		}
		try {
			return Probes.of(rules, bundle(name, bundles).createSslContext());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("probe.ssl-bundle: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Checks at startup that every SSL bundle the probe rules name exists.
	 * @param named the property → the bundle name it sets (empty ones are skipped)
	 * @param bundles the application's SSL bundles, or {@code null} when it has none
	 * @throws IllegalArgumentException naming the first property whose bundle does not
	 * exist
	 */
	public static void check(Map<String, String> named, @Nullable SslBundles bundles) {
		named.forEach((property, name) -> {
			if (!name.isEmpty()) {
				try {
					bundle(name, bundles);
				}
				catch (IllegalArgumentException ex) {
					throw new IllegalArgumentException("Invalid " + property + ": " + ex.getMessage(), ex);
				}
			}
		});
	}

	private static SslBundle bundle(String name, @Nullable SslBundles bundles) {
		String allowed = "the name of a bundle configured under spring.ssl.bundle.jks.<name> or"
				+ " spring.ssl.bundle.pem.<name>, or empty for the JVM's default trust store";
		if (bundles == null) {
			throw new IllegalArgumentException(
					"no SSL bundle named '" + name + "' (the application has none); use " + allowed);
		}
		try {
			return bundles.getBundle(name);
		}
		catch (NoSuchSslBundleException ex) {
			throw new IllegalArgumentException(
					"no SSL bundle named '" + name + "' (configured: " + bundles.getBundleNames() + "); use " + allowed,
					ex);
		}
	}

}
