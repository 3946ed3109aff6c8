package dev.atlas.autoconfigure.orca;

import java.lang.management.ManagementFactory;
import java.util.function.DoubleSupplier;

import com.sun.management.OperatingSystemMXBean;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The CPU utilization a provider reports: a gauge of the application's
 * {@link MeterRegistry} ({@code process.cpu.usage} by default), or, without one, the
 * JVM's {@code com.sun.management.OperatingSystemMXBean#getProcessCpuLoad()}. The gauge
 * is looked up until found (meters may be bound after this starts). Thread-safe.
 */
final class CpuUtilization implements DoubleSupplier {

	private final @Nullable MeterRegistry registry;

	private final String meter;

	private volatile @Nullable Gauge gauge;

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
