package dev.atlas.autoconfigure.orca;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A provider whose every {@code GET /who} burns CPU: {@value #BASE_COST_NANOS} ns of its
 * thread's CPU time times {@link #cost(double)} ({@code app.cost}, 1 by default), so that
 * a provider with cost 2 serves half as many requests per CPU second: half the capacity,
 * by CPU, not by sleeping. It answers its port, remembers whether the last call asked for
 * a load report, and reports as its application utilization the CPU time its requests
 * took per second of the last second or so (all the providers of a test share the JVM,
 * whose process CPU would be the same for all).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@RestController
public class CostlyApp {

	/** CPU time of one call at cost 1, ns. */
	static final long BASE_COST_NANOS = 300_000;

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private final Environment environment;

	private final LongAdder busyNanos = new LongAdder();

	private final AtomicInteger asked = new AtomicInteger();

	private volatile double cost;

	/** The last utilization sample: {@code [wall ns, busy ns, utilization]}. */
	private double[] sample = { System.nanoTime(), 0, 0 };

	CostlyApp(Environment environment) {
		this.environment = environment;
		this.cost = environment.getProperty("app.cost", Double.class, 1.0);
	}

	@Bean
	ApplicationUtilization costlyUtilization() {
		return this::utilization;
	}

	@GetMapping("/who")
	String who(HttpServletRequest request) {
		if (request.getHeader("endpoint-load-metrics-format") != null) {
			this.asked.incrementAndGet();
		}
		long start = THREADS.getCurrentThreadCpuTime();
		long spend = (long) (BASE_COST_NANOS * this.cost);
		long x = 1;
		while (THREADS.getCurrentThreadCpuTime() - start < spend) {
			for (int i = 0; i < 200; i++) {
				x = x * 6364136223846793005L + 1442695040888963407L;
			}
		}
		this.busyNanos.add(THREADS.getCurrentThreadCpuTime() - start + (x & 1));
		return this.environment.getProperty("local.server.port");
	}

	/**
	 * Changes the cost of a call from now on.
	 * @param cost a factor of {@value #BASE_COST_NANOS} ns, e.g. 2 for half the capacity
	 */
	void cost(double cost) {
		this.cost = cost;
	}

	/**
	 * Calls that asked for a load report.
	 * @return the count since start
	 */
	int asked() {
		return this.asked.get();
	}

	/** CPU time of calls per second over the last second or more: a ratio. */
	private synchronized double utilization() {
		long now = System.nanoTime();
		double busy = this.busyNanos.sum();
		if (now - this.sample[0] >= 1e9) {
			this.sample = new double[] { now, busy, (busy - this.sample[1]) / (now - this.sample[0]) };
		}
		return this.sample[2];
	}

}
