package dev.atlas.autoconfigure.warmup;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.weighting.WarmupRules;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Warmup (slow start) with Envoy's curve, {@code atlas.warmup.*}: new instances ramp up
 * their weight. Per service under {@code atlas.services.<serviceId>.warmup.*}. Mutable
 * while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = WarmupProperties.PREFIX)
public class WarmupProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".warmup";

	/** Whether new instances ramp up their weight. */
	private boolean enabled = true;

	/**
	 * Length of the ramp after an instance registers (or is first seen); 0 turns warmup
	 * off. 60s by default.
	 */
	private Duration duration = Duration.ofSeconds(60);

	/**
	 * Shape of the ramp: 1.0 (the default) is linear, larger values ramp faster early.
	 * Must be > 0.
	 */
	private double aggression = 1.0;

	/**
	 * Floor of the weight factor in percent (0..100), so a new instance is never starved.
	 * 10 by default.
	 */
	private double minWeightPercent = 10;

	/**
	 * Validates the global values.
	 * @throws IllegalArgumentException naming the property when a value is out of range
	 */
	@Override
	public void afterPropertiesSet() {
		toRules(PREFIX);
	}

	/**
	 * The warmup rules of these values.
	 * @param prefix where these values were bound, for the message, e.g.
	 * {@code atlas.warmup} or {@code atlas.services.user-service.warmup}
	 * @return {@link WarmupRules#OFF} when disabled
	 * @throws IllegalArgumentException naming the property when a value is out of range
	 * (checked even when disabled)
	 */
	public WarmupRules toRules(String prefix) {
		try {
			WarmupRules rules = new WarmupRules(this.duration, this.aggression, this.minWeightPercent);
			return this.enabled ? rules : WarmupRules.OFF;
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + "." + ex.getMessage(), ex);
		}
	}

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
