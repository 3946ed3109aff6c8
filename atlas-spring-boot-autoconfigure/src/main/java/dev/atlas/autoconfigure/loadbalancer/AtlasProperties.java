package dev.atlas.autoconfigure.loadbalancer;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.atlas.autoconfigure.settings.AtlasSettings;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The root of Atlas's configuration, {@code atlas.*}: the on/off switch and the
 * per-service overrides. Every other section has its own class, bound from its own prefix
 * and validated there: {@code LoadBalancerProperties} ({@code atlas.loadbalancer}),
 * {@code GrayProperties} ({@code atlas.gray}), {@code AffinityProperties}
 * ({@code atlas.affinity}), {@code WarmupProperties} ({@code atlas.warmup}),
 * {@code PropagationProperties} ({@code atlas.propagation}), {@code LifecycleProperties}
 * ({@code atlas.lifecycle}) and {@code RegistryProperties} ({@code atlas.registry}).
 *
 * <p>
 * What applies to one service is resolved by {@link AtlasSettings#settingsFor(String)}:
 * the global section overlaid by the same section under
 * {@code atlas.services.<serviceId>}. Invalid values fail startup with a message naming
 * the property and the allowed values. Mutable while being bound, not thread-safe; read
 * only afterwards.
 *
 * <p>
 * This class is in the composition root because {@link ServiceProperties} names the
 * built-in sections' properties classes; the settings code binds the configured keys
 * generically and reads the prefix from {@link AtlasSettings#PREFIX}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = AtlasProperties.PREFIX)
public class AtlasProperties {

	/** Prefix of every Atlas property, {@link AtlasSettings#PREFIX}. */
	public static final String PREFIX = AtlasSettings.PREFIX;

	/**
	 * Whether Atlas is the load balancer of every @LoadBalanced client. When false,
	 * Spring Cloud LoadBalancer's defaults apply unchanged.
	 */
	private boolean enabled = true;

	/**
	 * Per-service overrides, keyed by service id (e.g.
	 * atlas.services.user-service.loadbalancer.strategy), matched ignoring case; an id
	 * with dots is written in brackets
	 * (atlas.services[user.service].loadbalancer.strategy). Each section (loadbalancer,
	 * gray, warmup) is overlaid on the global section of the same name: a value not set
	 * for the service is the global one. A key that matches no called service is reported
	 * with a WARN.
	 */
	private final Map<String, ServiceProperties> services = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	/**
	 * The per-service sections as written under {@code atlas.services.<serviceId>},
	 * <em>without</em> the global values: a value the service does not set holds its
	 * class default here. Read what applies to a service with
	 * {@link AtlasSettings#settingsFor(String)}; this map gives the configured service
	 * ids.
	 * @return service id to its sections
	 */
	public Map<String, ServiceProperties> getServices() {
		return this.services;
	}

}
