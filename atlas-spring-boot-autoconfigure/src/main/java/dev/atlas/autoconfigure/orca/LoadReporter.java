package dev.atlas.autoconfigure.orca;

import java.time.Duration;
import java.util.Objects;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

import dev.atlas.loadbalancer.orca.LoadReport;
import dev.atlas.loadbalancer.support.WindowedCount;
import org.jspecify.annotations.Nullable;

/**
 * The provider side of load reporting: counts the requests this instance serves and the
 * errors (5xx) it answers over a sliding window, and writes ORCA's
 * {@value LoadReport#HEADER} header for a caller that asks for it with
 * {@value LoadReport#FORMAT_HEADER} ({@code TEXT} or {@code JSON}): the CPU utilization
 * (its source sampled at each computation and averaged exponentially with a time constant
 * of half the window, so that it covers about the time the rates do: a gauge such as
 * {@code process.cpu.usage} reads the last fraction of a second and moves a lot), the
 * application's utilization when an {@link ApplicationUtilization} is given (as given),
 * and the request and error rates (per second, over the time the window covers: less than
 * the window just after start). The report and both forms of the header's value are
 * computed at most every 100 ms and shared by the answers in between.
 *
 * <p>
 * Thread-safe; counting is lock-free and allocates nothing; the computation, at most once
 * per 100 ms, takes this object's monitor.
 *
 * @since 0.1.0
 */
public class LoadReporter {

	/** How long one computed report is served. */
	static final long REFRESH_NANOS = Duration.ofMillis(100).toNanos();

	private final WindowedCount requests;

	private final WindowedCount errors;

	private final DoubleSupplier cpu;

	private final @Nullable ApplicationUtilization application;

	private final LongSupplier ticker;

	/** Half the window: the time constant of the CPU utilization's average, ns. */
	private final double cpuTimeConstantNanos;

	/** The CPU utilization averaged so far (guarded by this object's monitor). */
	private double cpuSmoothed;

	/**
	 * When it was last averaged in, or {@code Long.MIN_VALUE} before the first sample.
	 */
	private long cpuSmoothedAt = Long.MIN_VALUE;

	/** The report served until {@link #REFRESH_NANOS} after it was computed. */
	private volatile Cached cached;

	/**
	 * Creates the reporter.
	 * @param window the window of the rates, at least 1 s
	 * @param cpu the CPU utilization now, a ratio (a value that is not a finite number
	 * {@code >= 0} is reported as 0)
	 * @param application the application's utilization, or {@code null} for none
	 * @param ticker the clock, ns
	 */
	public LoadReporter(Duration window, DoubleSupplier cpu, @Nullable ApplicationUtilization application,
			LongSupplier ticker) {
		this.ticker = Objects.requireNonNull(ticker, "ticker");
		long now = ticker.getAsLong();
		this.requests = new WindowedCount(window.toNanos(), now);
		this.errors = new WindowedCount(window.toNanos(), now);
		this.cpuTimeConstantNanos = window.toNanos() / 2.0;
		this.cpu = Objects.requireNonNull(cpu, "cpu");
		this.application = application;
		// computed at the first call
		LoadReport none = new LoadReport(0, 0, 0, 0);
		this.cached = new Cached(now - REFRESH_NANOS, none, none.toText(), none.toJson());
	}

	/**
	 * Counts one answered request.
	 * @param status its HTTP status; {@code 5xx} counts as an error
	 */
	public void served(int status) {
		long now = this.ticker.getAsLong();
		this.requests.add(1, now);
		if (status >= 500) {
			this.errors.add(1, now);
		}
	}

	/**
	 * The header value to write for a caller's request.
	 * @param format the request's {@value LoadReport#FORMAT_HEADER} value, {@code null}
	 * when absent
	 * @return the value, or {@code null} when the request asked for no report or for a
	 * format not written ({@code BIN})
	 */
	public @Nullable String header(@Nullable String format) {
		if (format == null) {
			return null;
		}
		String wanted = format.strip();
		boolean json = wanted.equalsIgnoreCase("JSON");
		if (!json && !wanted.equalsIgnoreCase("TEXT")) {
			return null;
		}
		Cached current = current();
		return json ? current.json : current.text;
	}

	/**
	 * The report now (computed at most every 100 ms).
	 * @return the report
	 */
	public LoadReport report() {
		return current().report;
	}

	private Cached current() {
		long now = this.ticker.getAsLong();
		Cached current = this.cached;
		if (now - current.at < REFRESH_NANOS) {
			return current;
		}
		return refresh(now);
	}

	/** Computes the report now, once per 100 ms whatever the number of requests. */
	private synchronized Cached refresh(long now) {
		Cached current = this.cached;
		if (now - current.at < REFRESH_NANOS) {
			return current;
		}
		double seconds = this.requests.coveredNanos(now) / 1e9;
		double sample = valid(this.cpu.getAsDouble());
		if (this.cpuSmoothedAt == Long.MIN_VALUE) {
			this.cpuSmoothed = sample;
		}
		else {
			double alpha = 1 - Math.exp(-(now - this.cpuSmoothedAt) / this.cpuTimeConstantNanos);
			this.cpuSmoothed += alpha * (sample - this.cpuSmoothed);
		}
		this.cpuSmoothedAt = now;
		LoadReport report = new LoadReport(this.cpuSmoothed,
				(this.application != null) ? valid(this.application.utilization()) : 0,
				this.requests.sum(now) / seconds, this.errors.sum(now) / seconds);
		Cached computed = new Cached(now, report, report.toText(), report.toJson());
		this.cached = computed;
		return computed;
	}

	private static double valid(double value) {
		return (value >= 0 && !Double.isInfinite(value)) ? value : 0;
	}

	private record Cached(long at, LoadReport report, String text, String json) {
	}

}
