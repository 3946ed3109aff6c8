package dev.atlas.autoconfigure.loadbalancer;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.loadbalancer.support.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;

/**
 * The one small executor that runs Atlas's probes for the whole application (outlier
 * probes, connect checks of stale instance lists) and its reads of the callers' spread
 * over the zones (proportional cluster affinity): two daemon threads named
 * {@code atlas-probe-N}, started at the first task (an application that never ejects an
 * instance and has no zone starts none), stopped when the application context closes;
 * tasks scheduled after that are dropped. A probe blocks its thread for at most its
 * timeout. Thread-safe.
 */
class ProbeScheduler implements Scheduler, DisposableBean {

	/** Threads: probes block up to their timeout, so one slow probe does not hold all. */
	static final int THREADS = 2;

	private static final Logger log = LoggerFactory.getLogger(ProbeScheduler.class);

	private final ScheduledThreadPoolExecutor executor;

	ProbeScheduler() {
		this("atlas-probe-");
	}

	/**
	 * @param threadNamePrefix the names of its threads, followed by 1, 2
	 */
	ProbeScheduler(String threadNamePrefix) {
		AtomicInteger count = new AtomicInteger();
		ThreadFactory threads = (task) -> {
			Thread thread = new Thread(task, threadNamePrefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
		this.executor = new ScheduledThreadPoolExecutor(THREADS, threads);
		this.executor.setRemoveOnCancelPolicy(true);
		this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	@Override
	public void schedule(Runnable task, long delayMillis) {
		try {
			this.executor.schedule(() -> {
				try {
					task.run();
				}
				catch (RuntimeException ex) {
					log.warn("An Atlas probe task failed", ex);
				}
			}, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// shut down: the application is closing
		}
	}

	/**
	 * Tasks waiting to run (for tests).
	 * @return {@code >= 0}
	 */
	int pending() {
		return this.executor.getQueue().size();
	}

	/** Stops the threads; pending tasks are dropped. */
	@Override
	public void destroy() {
		this.executor.shutdownNow();
	}

}
