package dev.atlas.autoconfigure.orca;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleSupplier;

import com.sun.management.OperatingSystemMXBean;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CPU utilization a provider reports: a gauge of the application's
 * {@link MeterRegistry} ({@code process.cpu.usage} by default), or, without one, the
 * JVM's {@code com.sun.management.OperatingSystemMXBean#getProcessCpuLoad()}. The gauge
 * is looked up until found (meters may be bound after this starts); a gauge named in
 * {@code atlas.load-report.utilization-meter} that is not found at the first report is
 * logged once (WARN). Thread-safe.
 */
final class CpuUtilization implements DoubleSupplier {

	/** Micrometer's recent CPU usage of this JVM, bound by Spring Boot's metrics. */
	static final String DEFAULT_METER = "process.cpu.usage";

	private static final Logger log = LoggerFactory.getLogger(CpuUtilization.class);

	private final @Nullable MeterRegistry registry;

	private final String meter;

	private volatile @Nullable Gauge gauge;

	private final AtomicBoolean warned = new AtomicBoolean();

	CpuUtilization(@Nullable MeterRegistry registry, String meter) {
		this.registry = registry;
		this.meter = meter;
	}

	@Override
	public double getAsDouble() {
		Gauge found = this.gauge;
		if (found == null && this.registry != null) {
			found = this.registry.find(this.meter).gauge();
			this.gauge = found;
			if (found == null && !DEFAULT_METER.equals(this.meter) && this.warned.compareAndSet(false, true)) {
				log.warn("atlas.load-report.utilization-meter names '{}', but the MeterRegistry has no gauge of that "
						+ "name; the JVM's process CPU load is reported until there is", this.meter);
			}
		}
		if (found != null) {
			return found.value();
		}
		if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
			return os.getProcessCpuLoad();
		}
		return 0;
	}

}
