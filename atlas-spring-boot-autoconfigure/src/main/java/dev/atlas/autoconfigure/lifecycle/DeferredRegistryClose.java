package dev.atlas.autoconfigure.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;
import org.springframework.context.SmartLifecycle;

/**
 * Keeps the registry client open until the web server has stopped: the registry client
 * closes last.
 *
 * <p>
 * Spring Cloud's deregistration ({@code AbstractAutoServiceRegistration.stop()}) also
 * calls {@link ServiceRegistry#close()}, and some registries tear down there what the
 * drain still needs. Spring Cloud Alibaba's {@code NacosServiceRegistry.close()} shuts
 * the application's shared Nacos naming service down: for the whole drain the stopping
 * application's own load-balanced calls would route on a frozen view (still choosing
 * itself, and instances disabled meanwhile), and the next lookup would build a new naming
 * service without Atlas's change subscriptions. So once the shutdown sequence
 * ({@link GracefulShutdown}) has begun, Atlas's proxy around every
 * {@code ServiceRegistry} bean hands its {@code close()} here instead; it runs when this
 * lifecycle stops, in the last phase ({@link Integer#MIN_VALUE}): after the drain and
 * after Spring Boot's graceful web-server shutdown has finished in-flight requests, or at
 * the latest when this bean is destroyed. A {@code close()} outside the sequence (a
 * registry restarting its registration) is not held.
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class DeferredRegistryClose implements SmartLifecycle, DisposableBean {

	private static final Logger log = LoggerFactory.getLogger(DeferredRegistryClose.class);

	/** Guards every field below. */
	private final Object lock = new Object();

	private final List<Runnable> pending = new ArrayList<>();

	private final BooleanSupplier shuttingDown;

	private boolean released;

	private volatile boolean running;

	/**
	 * Creates the holder.
	 * @param shuttingDown whether the shutdown sequence has begun; from then until
	 * {@link #stop()}, a registry's {@code close()} is held back
	 */
	public DeferredRegistryClose(BooleanSupplier shuttingDown) {
		this.shuttingDown = shuttingDown;
	}

	/**
	 * Takes a registry's {@code close()} if closes are held back.
	 * @param close runs the registry's own {@code close()}
	 * @return {@code true} if it was taken and will run when this lifecycle stops;
	 * {@code false} if the caller must close now
	 */
	boolean defer(Runnable close) {
		synchronized (this.lock) {
			if (this.released || !this.shuttingDown.getAsBoolean()) {
				return false;
			}
			this.pending.add(close);
		}
		log.debug("Registry client close held back until the web server has stopped");
		return true;
	}

	@Override
	public void start() {
		synchronized (this.lock) {
			this.running = true;
			this.released = false;
		}
	}

	/**
	 * Not stopped when the context pauses: a pause is not a shutdown.
	 * @return {@code false}
	 */
	@Override
	public boolean isPauseable() {
		return false;
	}

	/** Runs the held-back closes, in the order they were asked for; idempotent. */
	@Override
	public void stop() {
		List<Runnable> closes;
		synchronized (this.lock) {
			this.running = false;
			this.released = true;
			closes = new ArrayList<>(this.pending);
			this.pending.clear();
		}
		if (!closes.isEmpty()) {
			log.info("Shutdown: web server stopped; closing the registry client");
		}
		for (Runnable close : closes) {
			try {
				close.run();
			}
			catch (RuntimeException ex) {
				log.warn("Shutdown: closing the registry client failed", ex);
			}
		}
	}

	/**
	 * Runs what is still held back, should the context close without stopping its
	 * lifecycle beans (a failed startup).
	 */
	@Override
	public void destroy() {
		stop();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Last: stopped after every other lifecycle, the web server's among them.
	 * @return {@link Integer#MIN_VALUE}
	 */
	@Override
	public int getPhase() {
		return Integer.MIN_VALUE;
	}

}
