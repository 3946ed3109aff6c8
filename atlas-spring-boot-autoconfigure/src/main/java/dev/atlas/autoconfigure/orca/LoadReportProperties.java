package dev.atlas.autoconfigure.orca;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The provider side of load reporting, {@code atlas.load-report.*}: whether this
 * application answers its load-balanced callers with ORCA's {@code endpoint-load-metrics}
 * header, for their {@code weighted-round-robin} strategy. Mutable while being bound, not
 * thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = LoadReportProperties.PREFIX)
public class LoadReportProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".load-report";

	/**
	 * Whether this application reports its load on the answers of requests that ask for
	 * it (header endpoint-load-metrics-format: TEXT or JSON, which Atlas's callers send
	 * when their strategy for this service is weighted-round-robin). Off by default.
	 */
	private boolean enabled;

	/**
	 * The window the reported request and error rates are counted over, at least 1s. 10s
	 * by default.
	 */
	private Duration window = Duration.ofSeconds(10);

	/**
	 * Name of the gauge (in the application's MeterRegistry) whose value is reported as
	 * the CPU utilization, a ratio 0..1. process.cpu.usage by default (Micrometer's
	 * recent CPU usage of this JVM); without such a gauge, the JVM's own
	 * OperatingSystemMXBean is read.
	 */
	private String utilizationMeter = "process.cpu.usage";

	/**
	 * Whether a Spring Cloud Gateway passes the load reports of the services it routes to
	 * on to its own clients. Off by default: the gateway removes them, so that clients
	 * outside the fleet do not learn the instances' load.
	 */
	private boolean gatewayForward;

	@Override
	public void afterPropertiesSet() {
		if (this.window == null || this.window.compareTo(Duration.ofSeconds(1)) < 0) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + ".window: must be a duration of at least 1s, was " + this.window);
		}
		if (this.utilizationMeter == null || this.utilizationMeter.isBlank()) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + ".utilization-meter: must name a gauge, e.g. process.cpu.usage, was '"
							+ this.utilizationMeter + "'");
		}
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getWindow() {
		return this.window;
	}

	public void setWindow(Duration window) {
		this.window = window;
	}

	public String getUtilizationMeter() {
		return this.utilizationMeter;
	}

	public void setUtilizationMeter(String utilizationMeter) {
		this.utilizationMeter = utilizationMeter;
	}

	public boolean isGatewayForward() {
		return this.gatewayForward;
	}

	public void setGatewayForward(boolean gatewayForward) {
		this.gatewayForward = gatewayForward;
	}

}
