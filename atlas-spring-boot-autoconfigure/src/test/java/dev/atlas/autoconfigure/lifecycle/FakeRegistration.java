package dev.atlas.autoconfigure.lifecycle;

import java.util.List;

import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationProperties;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.context.ApplicationContext;

/**
 * An auto-registration that only records, in a shared list of steps, that it registered
 * ({@code "register"}, on the web server event) and deregistered ({@code "deregister"}).
 * Hooks run inside either call, e.g. to advance a fake clock or to block on a latch.
 * Thread-safe as long as the steps list is.
 */
final class FakeRegistration extends AbstractAutoServiceRegistration<Registration> {

	private final List<String> steps;

	private volatile boolean running;

	private volatile Runnable onRegister = () -> {
	};

	private volatile Runnable onStop = () -> {
	};

	FakeRegistration(ApplicationContext context, List<String> steps, boolean running) {
		super(context, null, new AutoServiceRegistrationProperties());
		this.steps = steps;
		this.running = running;
	}

	/**
	 * Runs a hook inside each registration, before it counts as registered.
	 * @param hook the hook
	 * @return this
	 */
	FakeRegistration onRegister(Runnable hook) {
		this.onRegister = hook;
		return this;
	}

	/**
	 * Runs a hook inside each deregistration.
	 * @param hook the hook
	 * @return this
	 */
	FakeRegistration onStop(Runnable hook) {
		this.onStop = hook;
		return this;
	}

	/**
	 * A web server event of a root web context, as Spring Boot publishes it once the
	 * server is up.
	 * @param context the context it names
	 * @return the event
	 */
	static WebServerInitializedEvent webServerStarted(WebServerApplicationContext context) {
		WebServer server = new WebServer() {

			@Override
			public void start() {
			}

			@Override
			public void stop() {
			}

			@Override
			public int getPort() {
				return 8080;
			}

		};
		return new WebServerInitializedEvent(server) {

			@Override
			public WebServerApplicationContext getApplicationContext() {
				return context;
			}

		};
	}

	@Override
	public void onApplicationEvent(WebServerInitializedEvent event) {
		this.onRegister.run();
		this.steps.add("register");
		this.running = true;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public void stop() {
		if (!this.running) {
			return;
		}
		this.steps.add("deregister");
		this.onStop.run();
		this.running = false;
	}

	@Override
	protected Object getConfiguration() {
		return new Object();
	}

	@Override
	protected boolean isEnabled() {
		return true;
	}

	@Override
	protected Registration getRegistration() {
		throw new UnsupportedOperationException();
	}

	@Override
	protected Registration getManagementRegistration() {
		throw new UnsupportedOperationException();
	}

}
