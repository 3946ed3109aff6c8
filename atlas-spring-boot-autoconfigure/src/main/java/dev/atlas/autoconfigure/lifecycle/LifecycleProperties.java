package dev.atlas.autoconfigure.lifecycle;

import java.time.Duration;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.PropertyChecks;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Lossless online/offline of this application in its registry, {@code atlas.lifecycle.*}.
 * Mutable while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = LifecycleProperties.PREFIX)
public class LifecycleProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".lifecycle";

	/**
	 * Whether this application registers in its registry only once it is ready and
	 * accepting traffic (after every runner), instead of as soon as the web server is up.
	 * Its registration then carries atlas.registered-at, which callers use for warmup.
	 */
	private boolean registerWhenReady = true;

	/**
	 * Extra wait after readiness before registering (e.g. for caches to fill). 0 by
	 * default.
	 */
	private Duration registerDelay = Duration.ZERO;

	/**
	 * Whether Atlas runs the shutdown sequence on SIGTERM or preStop: deregister, refuse
	 * traffic, drain, then let Spring Boot stop the web server gracefully.
	 */
	private boolean gracefulShutdown = true;

	/**
	 * How long to keep serving after deregistration, so callers notice (they refresh on
	 * registry events, or at their cache TTL) before the web server stops. 10s by
	 * default. A web application that registered nothing drains after refusing traffic,
	 * only on a preStop call or on Kubernetes (spring.main.cloud-platform). Replaces
	 * Spring Cloud Alibaba's graceful-shutdown-wait-time.
	 */
	private Duration drain = Duration.ofSeconds(10);

	/**
	 * Longest wait for the registry to confirm deregistration (e.g. when it is
	 * unreachable). 3s by default.
	 */
	private Duration deregisterTimeout = Duration.ofSeconds(3);

	/** The preStop endpoint, /actuator/prestop. */
	private final Prestop prestop = new Prestop();

	/**
	 * Validates the durations.
	 * @throws IllegalArgumentException naming the property when a duration is negative
	 */
	@Override
	public void afterPropertiesSet() {
		PropertyChecks.requireNonNegative(PREFIX + ".register-delay", this.registerDelay);
		PropertyChecks.requireNonNegative(PREFIX + ".drain", this.drain);
		PropertyChecks.requireNonNegative(PREFIX + ".deregister-timeout", this.deregisterTimeout);
	}

	public boolean isRegisterWhenReady() {
		return this.registerWhenReady;
	}

	public void setRegisterWhenReady(boolean registerWhenReady) {
		this.registerWhenReady = registerWhenReady;
	}

	public Duration getRegisterDelay() {
		return this.registerDelay;
	}

	public void setRegisterDelay(Duration registerDelay) {
		this.registerDelay = registerDelay;
	}

	public boolean isGracefulShutdown() {
		return this.gracefulShutdown;
	}

	public void setGracefulShutdown(boolean gracefulShutdown) {
		this.gracefulShutdown = gracefulShutdown;
	}

	public Duration getDrain() {
		return this.drain;
	}

	public void setDrain(Duration drain) {
		this.drain = drain;
	}

	public Duration getDeregisterTimeout() {
		return this.deregisterTimeout;
	}

	public void setDeregisterTimeout(Duration deregisterTimeout) {
		this.deregisterTimeout = deregisterTimeout;
	}

	/**
	 * The preStop endpoint's settings, {@code atlas.lifecycle.prestop.*}.
	 * @return the section, never {@code null}; bound in place
	 */
	public Prestop getPrestop() {
		return this.prestop;
	}

	/**
	 * The preStop endpoint, {@code atlas.lifecycle.prestop.*}. Mutable while being bound,
	 * not thread-safe.
	 */
	public static class Prestop {

		/**
		 * Whether /actuator/prestop may be served on the application's own port (no
		 * management.server.port of its own), where every client that reaches the
		 * application can take the instance out of service. false by default: startup
		 * then fails when prestop is exposed over HTTP on that port. Set true only when
		 * clients cannot reach that port's /actuator paths (e.g. a gateway that does not
		 * route them); Atlas logs one WARN at startup.
		 */
		private boolean allowOnServerPort = false;

		/**
		 * Whether /actuator/prestop may be served on the application's own port.
		 * @return {@code true} if so; {@code false} by default
		 */
		public boolean isAllowOnServerPort() {
			return this.allowOnServerPort;
		}

		/**
		 * Sets whether /actuator/prestop may be served on the application's own port.
		 * @param allowOnServerPort {@code true} to start (with one WARN) instead of
		 * failing when it is exposed over HTTP there
		 */
		public void setAllowOnServerPort(boolean allowOnServerPort) {
			this.allowOnServerPort = allowOnServerPort;
		}

	}

}
