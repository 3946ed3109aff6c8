package dev.atlas.loadbalancer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import dev.atlas.loadbalancer.support.Scheduler;

/**
 * A {@link Scheduler} that runs nothing by itself: tests move a {@link MutableClock} and
 * run what is due.
 */
public final class ManualScheduler implements Scheduler {

	private final MutableClock clock;

	private final List<Task> tasks = new ArrayList<>();

	private final List<Long> delays = new ArrayList<>();

	public ManualScheduler(MutableClock clock) {
		this.clock = clock;
	}

	@Override
	public synchronized void schedule(Runnable task, long delayMillis) {
		this.tasks.add(new Task(this.clock.millis() + Math.max(0, delayMillis), task));
		this.delays.add(delayMillis);
	}

	/** Runs every task due at the clock's time (and those they schedule that are due). */
	public void runDue() {
		while (true) {
			Task next;
			synchronized (this) {
				next = this.tasks.stream()
					.filter((task) -> task.at <= this.clock.millis())
					.min(Comparator.comparingLong(Task::at))
					.orElse(null);
				if (next == null) {
					return;
				}
				this.tasks.remove(next);
			}
			next.run.run();
		}
	}

	/** Moves the clock to the next task and runs what is due then. */
	public void runNext() {
		long at;
		synchronized (this) {
			at = this.tasks.stream().mapToLong(Task::at).min().orElseThrow();
		}
		if (at > this.clock.millis()) {
			this.clock.set(at);
		}
		runDue();
	}

	public synchronized int pending() {
		return this.tasks.size();
	}

	/** Delays asked for so far, in ms, in order. */
	public synchronized List<Long> delays() {
		return List.copyOf(this.delays);
	}

	private record Task(long at, Runnable run) {
	}

}
