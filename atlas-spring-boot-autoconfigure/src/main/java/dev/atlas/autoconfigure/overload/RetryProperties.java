package dev.atlas.autoconfigure.overload;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.overload.RetryBudgetRules;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Retries, {@code atlas.retry.*}: the retry budget that bounds the retries of every retry
 * path to a share of the requests. Per service under
 * {@code atlas.services.<serviceId>.retry.*}. Mutable while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = RetryProperties.PREFIX)
public class RetryProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".retry";

	/** The retry budget. */
	private final Budget budget = new Budget();

	/**
	 * Validates the global values.
	 * @throws IllegalArgumentException naming the property when a value is out of range
	 */
	@Override
	public void afterPropertiesSet() {
		toRules(PREFIX);
	}

	/**
	 * The retry budget rules of these values.
	 * @param prefix where these values were bound, for the message, e.g.
	 * {@code atlas.retry} or {@code atlas.services.user-service.retry}
	 * @return the rules; {@link RetryBudgetRules#enabled()} {@code false} when disabled
	 * @throws IllegalArgumentException naming the property when a value is out of range
	 * (checked even when disabled)
	 */
	public RetryBudgetRules toRules(String prefix) {
		try {
			return new RetryBudgetRules(this.budget.enabled, this.budget.ratio, this.budget.minRetriesPerSecond,
					this.budget.window);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Invalid " + prefix + "." + ex.getMessage(), ex);
		}
	}

	public Budget getBudget() {
		return this.budget;
	}

	/**
	 * The retry budget of a service (Finagle's and Linkerd's): over the last
	 * {@code window}, retries may be at most {@code ratio} of the requests plus
	 * {@code min-retries-per-second} for each second of the window. A retry beyond it is
	 * not made: the caller gets the original failure.
	 */
	public static class Budget {

		/**
		 * Whether retries are bounded by the budget; false lets every retry through, as
		 * Spring Cloud does.
		 */
		private boolean enabled = true;

		/**
		 * Retries allowed per request, a ratio from 0 to 1. 0.2 by default (Finagle's): a
		 * retry storm adds at most 20 % to the load of a failing service.
		 */
		private double ratio = RetryBudgetRules.DEFAULTS.ratio();

		/**
		 * Retries allowed per second whatever the traffic, >= 0. 10 by default
		 * (Finagle's): a caller with little traffic still retries every failure.
		 */
		private int minRetriesPerSecond = RetryBudgetRules.DEFAULTS.minRetriesPerSecond();

		/**
		 * How far back requests and retries count, from 1s to 1m. 10s by default
		 * (Finagle's): a budget spent in an outage is available again ten seconds after
		 * it.
		 */
		private Duration window = RetryBudgetRules.DEFAULTS.window();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public double getRatio() {
			return this.ratio;
		}

		public void setRatio(double ratio) {
			this.ratio = ratio;
		}

		public int getMinRetriesPerSecond() {
			return this.minRetriesPerSecond;
		}

		public void setMinRetriesPerSecond(int minRetriesPerSecond) {
			this.minRetriesPerSecond = minRetriesPerSecond;
		}

		public Duration getWindow() {
			return this.window;
		}

		public void setWindow(Duration window) {
			this.window = window;
		}

	}

}
