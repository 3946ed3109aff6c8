package dev.atlas.autoconfigure.lifecycle;

import java.util.Map;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code GET /actuator/prestop}: starts the shutdown sequence ({@link GracefulShutdown}:
 * deregister, refuse traffic, drain) and answers when the drain is over, for a Kubernetes
 * {@code httpGet} preStop hook. It is a GET, although it changes state, because that is
 * what an {@code httpGet} hook sends; so
 * {@code management.endpoint.prestop.access=read-only} does not turn it off. Idempotent:
 * a second call answers at once (or when the first one's drain ends) and does nothing
 * else.
 * <p>
 * What keeps it from clients is the port: exposed over HTTP (listed in
 * {@code management.endpoints.web.exposure.include}), it is served only when the
 * management server has a port of its own ({@code management.server.port}); on the
 * application's port startup fails, unless
 * {@code atlas.lifecycle.prestop.allow-on-server-port=true} (then with one WARN).
 *
 * @since 0.1.0
 */
@Endpoint(id = "prestop")
public class PreStopEndpoint {

	private final GracefulShutdown shutdown;

	/**
	 * Creates the endpoint.
	 * @param shutdown the sequence
	 */
	public PreStopEndpoint(GracefulShutdown shutdown) {
		this.shutdown = shutdown;
	}

	/**
	 * Runs the sequence and waits for the drain.
	 * @return {@code {"started": true|false, "state": "DRAINED"}}; {@code started} is
	 * false when an earlier call or SIGTERM started it
	 */
	@ReadOperation
	public Map<String, Object> preStop() {
		boolean started = this.shutdown.runAndWait(GracefulShutdown.Trigger.PRE_STOP);
		return Map.of("started", started, "state", this.shutdown.state().name());
	}

}
