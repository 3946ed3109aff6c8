package dev.atlas.loadbalancer.support;

/**
 * Runs a task later, off the request path: what probing uses, so that tests can run it by
 * hand. Backed in an application by one small shared executor that stops when the
 * application context closes (then tasks are dropped silently).
 *
 * <p>
 * Implementations are thread-safe and never run the task on the calling thread.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface Scheduler {

	/**
	 * Schedules a task.
	 * @param task run once, after the delay; exceptions it throws are logged and dropped
	 * @param delayMillis delay in ms; {@code <= 0} runs it as soon as possible
	 */
	void schedule(Runnable task, long delayMillis);

}
