package dev.atlas.autoconfigure.propagation;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.micrometer.context.ContextExecutorService;
import io.micrometer.context.ContextSnapshotFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.cloud.circuitbreaker.resilience4j.Resilience4JCircuitBreakerFactory;
import org.springframework.cloud.client.circuitbreaker.Customizer;
import org.springframework.core.Ordered;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Runs Spring Cloud CircuitBreaker Resilience4j's calls (a Feign call with
 * {@code spring.cloud.openfeign.circuitbreaker.enabled=true}, a
 * {@code CircuitBreakerFactory.create(…).run(…)} of the application) on executors that
 * carry the caller's context: each task restores the thread-locals registered with
 * Micrometer's context-propagation as they were on the thread that submitted it, Atlas's
 * routing context among them, so the call stays in its gray lane and keeps its hash key.
 * Resilience4j's own executors (a cached thread pool per factory, and per group with
 * {@code spring.cloud.openfeign.circuitbreaker.group.enabled}) carry nothing.
 *
 * <p>
 * Runs first among the factory's customizers: an application's customizer that sets
 * executors of its own replaces these (wrap them with {@link ContextExecutorService} to
 * keep the lane). The executors are cached thread pools of daemon threads named
 * {@code atlas-circuitbreaker-}, shut down with the application context. Thread-safe.
 */
class Resilience4jContextPropagation implements Customizer<Resilience4JCircuitBreakerFactory>, Ordered, DisposableBean {

	private final ContextSnapshotFactory snapshots = ContextSnapshotFactory.builder().clearMissing(true).build();

	private final List<ExecutorService> created = new ArrayList<>();

	private final CustomizableThreadFactory threads = new CustomizableThreadFactory("atlas-circuitbreaker-");

	Resilience4jContextPropagation() {
		this.threads.setDaemon(true);
	}

	@Override
	public void customize(Resilience4JCircuitBreakerFactory factory) {
		factory.configureExecutorService(contextAware());
		factory.configureGroupExecutorService((group) -> contextAware());
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public void destroy() {
		synchronized (this.created) {
			this.created.forEach(ExecutorService::shutdown);
			this.created.clear();
		}
	}

	private ExecutorService contextAware() {
		ExecutorService pool = Executors.newCachedThreadPool(this.threads);
		synchronized (this.created) {
			this.created.add(pool);
		}
		return ContextExecutorService.wrap(pool, this.snapshots::captureAll);
	}

}
