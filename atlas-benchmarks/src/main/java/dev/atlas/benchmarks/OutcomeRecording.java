package dev.atlas.benchmarks;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.atlas.loadbalancer.outlier.FailurePercentageRules;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierLifecycle;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.outlier.SuccessRateRules;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultRequestContext;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;

/**
 * What outlier detection costs a request at its completion: the {@link OutlierLifecycle}
 * callback of a successful attempt, with success-rate detection on (every outcome counted
 * for the interval) and off (Atlas's default: only failing instances tracked). Two
 * threads over 20 instances. Run:
 * {@code java -cp … org.openjdk.jmh.Main OutcomeRecording -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(2)
public class OutcomeRecording {

	/** {@code on}: success-rate detection enforcing 100; {@code off}: 0 (the default). */
	@Param({ "on", "off" })
	public String peers = "on";

	@SuppressWarnings("NullAway.Init")
	private OutlierLifecycle lifecycle;

	private final List<CompletionContext<Object, ServiceInstance, Object>> completions = new ArrayList<>();

	private int next;

	@Setup
	public void setUp() {
		OutlierRules d = OutlierRules.DEFAULTS;
		OutlierRules rules = new OutlierRules(true, d.consecutive5xx(), d.consecutiveGatewayFailure(),
				d.baseEjectionTime(), d.maxEjectionTime(), d.maxEjectionPercent(), d.panicThresholdPercent(), d.probe(),
				d.interval(),
				"on".equals(this.peers) ? new SuccessRateRules(100, 5, 100, 1.9) : SuccessRateRules.DEFAULTS,
				FailurePercentageRules.DEFAULTS);
		OutlierDetector detector = new OutlierDetector(Fixtures.SERVICE_ID, rules, Clock.systemUTC(),
				(instance) -> true, (task, delay) -> {
				}, new SimpleMeterRegistry());
		this.lifecycle = new OutlierLifecycle(detector);
		for (int i = 0; i < 20; i++) {
			ServiceInstance instance = new DefaultServiceInstance("i" + i, Fixtures.SERVICE_ID, "10.0.0." + i, 8080,
					false, Map.of());
			this.completions.add(new CompletionContext<>(CompletionContext.Status.SUCCESS,
					new DefaultRequest<>(new DefaultRequestContext()), new DefaultResponse(instance)));
		}
	}

	@Benchmark
	public void successfulAttempt() {
		int i = this.next++ % 20;
		this.lifecycle.onComplete(this.completions.get((i < 0) ? -i : i));
	}

}
