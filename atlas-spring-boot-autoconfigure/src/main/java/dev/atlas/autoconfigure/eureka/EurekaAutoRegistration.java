package dev.atlas.autoconfigure.eureka;

import dev.atlas.autoconfigure.lifecycle.AutoRegistration;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.cloud.netflix.eureka.serviceregistry.EurekaAutoServiceRegistration;
import org.springframework.cloud.netflix.eureka.serviceregistry.EurekaRegistration;

/**
 * Eureka's auto-registration as Atlas's lifecycle drives it. Registering replays the web
 * server's event on the auto-registration itself (not on Atlas's proxy around it, which
 * would hold it back again); deregistering is its {@code stop()}, which sets this
 * instance's status to {@code DOWN}, so that callers' Eureka clients (which list only
 * {@code UP} instances by default) drop it at their next fetch, while the Eureka client
 * keeps running until the application context is destroyed.
 * <p>
 * Until the auto-registration bean exists, it is not running and both calls do nothing.
 * Thread-safe.
 */
final class EurekaAutoRegistration implements AutoRegistration {

	private final ObjectProvider<EurekaRegistration> registration;

	private volatile @Nullable EurekaAutoServiceRegistration target;

	/**
	 * Creates the adapter.
	 * @param registration the registration of this application
	 */
	EurekaAutoRegistration(ObjectProvider<EurekaRegistration> registration) {
		this.registration = registration;
	}

	/**
	 * Attaches the auto-registration bean, before any proxy wraps it.
	 * @param target the auto-registration of Eureka
	 */
	void attach(EurekaAutoServiceRegistration target) {
		this.target = target;
	}

	@Override
	public boolean isRunning() {
		EurekaAutoServiceRegistration current = this.target;
		return current != null && current.isRunning();
	}

	@Override
	public void register(WebServerInitializedEvent event) {
		EurekaAutoServiceRegistration current = this.target;
		if (current != null) {
			current.onApplicationEvent(event);
		}
	}

	/**
	 * Sets the web server's port on the registration, as Eureka's auto-registration does
	 * only when it registers: with {@code server.port=0}, an {@code InstanceInfo} built
	 * while registration is held back (a load-balanced call in an
	 * {@code ApplicationRunner} starts the Eureka client) would otherwise carry port 0
	 * for good.
	 */
	@Override
	public void webServerStarted(WebServerInitializedEvent event) {
		EurekaRegistration current = this.registration.getIfAvailable();
		int port = event.getWebServer().getPort();
		if (current == null || port <= 0) {
			return;
		}
		if (current.getNonSecurePort() == 0) {
			current.setNonSecurePort(port);
		}
		if (current.isSecure() && current.getSecurePort() == 0) {
			current.setSecurePort(port);
		}
	}

	@Override
	public void deregister() {
		EurekaAutoServiceRegistration current = this.target;
		if (current != null) {
			current.stop();
		}
	}

	@Override
	public String toString() {
		return "EurekaAutoServiceRegistration";
	}

}
