package dev.atlas.autoconfigure.lifecycle;

import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;

/**
 * An application's automatic registration in its registry, as Atlas's lifecycle drives
 * it: registered once the application is ready ({@link LosslessRegistration}),
 * deregistered first on shutdown ({@link GracefulShutdown}). Spring Cloud's
 * {@link AbstractAutoServiceRegistration} (Nacos, ZooKeeper, Consul) is adapted by
 * {@link #of}; a registry whose auto-registration is not built on it (Eureka's
 * {@code EurekaAutoServiceRegistration}) contributes a bean of this type.
 * <p>
 * Implementations are thread-safe: {@link #deregister()} runs on a thread of its own,
 * bounded by {@code atlas.lifecycle.deregister-timeout}.
 *
 * @since 0.1.0
 */
public interface AutoRegistration {

	/**
	 * Whether the auto-registration has registered this application and not deregistered
	 * it since.
	 * @return {@code true} while registered
	 */
	boolean isRunning();

	/**
	 * Registers this application, as the registry's own listener would on the web
	 * server's start; called once the application is ready.
	 * @param event the (non-management) web server's {@link WebServerInitializedEvent},
	 * never {@code null}
	 * @throws RuntimeException what the registry threw, unchanged
	 */
	void register(WebServerInitializedEvent event);

	/**
	 * The web server has started and this auto-registration's registration is held back
	 * until the application is ready: takes what the registration must know before then
	 * (Eureka's: the port, for an {@code InstanceInfo} built meanwhile by any use of the
	 * discovery client). Does not register. Does nothing by default. Called on the thread
	 * that publishes the event (the main thread, while the context refreshes).
	 * @param event the (non-management) web server's {@link WebServerInitializedEvent},
	 * never {@code null}
	 */
	default void webServerStarted(WebServerInitializedEvent event) {
	}

	/**
	 * Deregisters this application (what the registry's own shutdown does, earlier); it
	 * keeps serving.
	 * @throws RuntimeException what the registry threw
	 */
	void deregister();

	/**
	 * Adapts Spring Cloud's generic auto-registration.
	 * @param target the auto-registration, not {@code null}
	 * @return its adapter
	 */
	static AutoRegistration of(AbstractAutoServiceRegistration<?> target) {
		return new AutoRegistration() {

			@Override
			public boolean isRunning() {
				return target.isRunning();
			}

			@Override
			public void register(WebServerInitializedEvent event) {
				target.onApplicationEvent(event);
			}

			@Override
			public void deregister() {
				target.stop();
			}

			@Override
			public String toString() {
				return target.getClass().getSimpleName();
			}

		};
	}

}
