package dev.atlas.autoconfigure.lifecycle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;

/**
 * Keeps {@code /actuator/prestop}, which takes this instance out of service, away from
 * the clients of the application: created at startup only when the endpoint is exposed
 * over HTTP in a web application, it lets the application start when the management
 * server has a port of its own ({@code management.server.port} set and different from
 * {@code server.port}; {@code 0}, a random port, counts as different), refuses to start
 * when the endpoint would be served on the application's port, and with
 * {@code atlas.lifecycle.prestop.allow-on-server-port=true} starts with one WARN naming
 * the risk instead.
 */
final class PreStopExposureGuard {

	/** Why and how to fix it: the message of the startup failure. */
	static final String REFUSAL = "/actuator/prestop is exposed over HTTP on the application's own port "
			+ "(management.server.port is not set, or equals server.port): any client that reaches the "
			+ "application could deregister and drain this instance. Do one of: set management.server.port "
			+ "to a port clients cannot reach (a Kubernetes preStop hook calls it there); or remove prestop "
			+ "from management.endpoints.web.exposure.include; or, if clients cannot reach this port's "
			+ "/actuator paths, set atlas.lifecycle.prestop.allow-on-server-port=true.";

	private static final Logger log = LoggerFactory.getLogger(PreStopExposureGuard.class);

	/**
	 * Checks where the endpoint is served.
	 * @param port where the management server listens, from the environment
	 * @param allowOnServerPort {@code atlas.lifecycle.prestop.allow-on-server-port}
	 * @throws IllegalStateException with {@link #REFUSAL} when it would be served on the
	 * application's own port and that is not allowed
	 */
	PreStopExposureGuard(ManagementPortType port, boolean allowOnServerPort) {
		if (port != ManagementPortType.SAME) {
			return;
		}
		if (!allowOnServerPort) {
			throw new IllegalStateException(REFUSAL);
		}
		log.warn("/actuator/prestop is served on the application's own port "
				+ "(atlas.lifecycle.prestop.allow-on-server-port=true): any client that reaches this port can "
				+ "deregister and drain this instance; set management.server.port to keep it from clients");
	}

}
