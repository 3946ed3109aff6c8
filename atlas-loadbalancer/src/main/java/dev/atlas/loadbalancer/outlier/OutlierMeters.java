package dev.atlas.loadbalancer.outlier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters of one service's outlier detection: ejections by reason
 * ({@value OutlierDetector#EJECTIONS_METER}{@code {service,reason}}), instances ejected
 * now ({@value OutlierDetector#EJECTED_METER}{@code {service}}, a gauge), requests routed
 * in panic mode ({@value OutlierDetector#PANIC_METER}{@code {service}}) and probes of
 * ejected instances ({@value OutlierDetector#PROBES_METER}{@code {service,result}}). Tags
 * are bounded: the service and one of two reasons, never the instance. Registered once,
 * when the detector is created; thread-safe (Micrometer's meters are).
 */
final class OutlierMeters {

	private final Counter ejections5xx;

	private final Counter ejectionsGateway;

	private final Counter ejectionsSuccessRate;

	private final Counter ejectionsFailurePercentage;

	private final Counter panic;

	private final Counter probesPassed;

	private final Counter probesFailed;

	/**
	 * Registers the meters of a service.
	 * @param serviceId the service, the {@code service} tag
	 * @param registry where the meters are registered
	 * @param detector read by the gauge (the instances it ejects now), held weakly as
	 * Micrometer holds gauge objects
	 */
	OutlierMeters(String serviceId, MeterRegistry registry, OutlierDetector detector) {
		this.ejections5xx = ejectionCounter(registry, serviceId, OutlierDetector.REASON_5XX);
		this.ejectionsGateway = ejectionCounter(registry, serviceId, OutlierDetector.REASON_GATEWAY);
		this.ejectionsSuccessRate = ejectionCounter(registry, serviceId, OutlierDetector.REASON_SUCCESS_RATE);
		this.ejectionsFailurePercentage = ejectionCounter(registry, serviceId,
				OutlierDetector.REASON_FAILURE_PERCENTAGE);
		this.panic = Counter.builder(OutlierDetector.PANIC_METER)
			.description("Requests routed with outlier ejection ignored: their lane was below the panic threshold")
			.tag("service", serviceId)
			.register(registry);
		this.probesPassed = probeCounter(registry, serviceId, OutlierDetector.PROBE_PASSED);
		this.probesFailed = probeCounter(registry, serviceId, OutlierDetector.PROBE_FAILED);
		Gauge.builder(OutlierDetector.EJECTED_METER, detector, (d) -> d.ejected().size())
			.description("Instances of the service ejected as outliers now")
			.tag("service", serviceId)
			.register(registry);
	}

	private static Counter ejectionCounter(MeterRegistry registry, String serviceId, String reason) {
		return Counter.builder(OutlierDetector.EJECTIONS_METER)
			.description("Instances ejected as outliers")
			.tag("service", serviceId)
			.tag("reason", reason)
			.register(registry);
	}

	private static Counter probeCounter(MeterRegistry registry, String serviceId, String result) {
		return Counter.builder(OutlierDetector.PROBES_METER)
			.description("Probes of ejected instances, by result")
			.tag("service", serviceId)
			.tag("result", result)
			.register(registry);
	}

	/**
	 * Counts a probe of an ejected instance.
	 * @param passed whether it passed
	 */
	void probed(boolean passed) {
		(passed ? this.probesPassed : this.probesFailed).increment();
	}

	/**
	 * Counts an ejection.
	 * @param reason one of the detector's {@code REASON_*} values
	 */
	void ejected(String reason) {
		Counter counter = switch (reason) {
			case OutlierDetector.REASON_5XX -> this.ejections5xx;
			case OutlierDetector.REASON_SUCCESS_RATE -> this.ejectionsSuccessRate;
			case OutlierDetector.REASON_FAILURE_PERCENTAGE -> this.ejectionsFailurePercentage;
			default -> this.ejectionsGateway;
		};
		counter.increment();
	}

	/** Counts a request routed in panic mode. */
	void panicked() {
		this.panic.increment();
	}

}
