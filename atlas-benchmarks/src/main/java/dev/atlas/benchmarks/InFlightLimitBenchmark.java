package dev.atlas.benchmarks;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import dev.atlas.benchmarks.Fixtures.FixedListSupplier;
import dev.atlas.benchmarks.Fixtures.Just;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;

/**
 * What the per-instance in-flight limit costs a request: a pick with the blocking
 * clients' {@code chooseAndWait} over 100 instances (weighted random), then the request's
 * start and completion in the service's statistics, as the request lifecycle records
 * them, with the limit off and on (at 1,000, so that no instance is ever full and the
 * rows compare the work, not a skip). With the limit on, the pick reserves a slot by
 * compare-and-set and the start claims it instead of counting itself. One load balancer
 * shared by every thread, as one service's is; run with {@code -t 2} for two threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 3, time = 1)
public class InFlightLimitBenchmark {

	/** The limit of the {@code on} rows: far above what the threads hold. */
	static final int LIMIT = 1_000;

	/** Whether the limit is on ({@value #LIMIT}) or off. */
	@Param({ "off", "on" })
	public String limit = "off";

	private final Request<RequestDataContext> request = Fixtures.request(null);

	private final InstanceStats stats = new InstanceStats();

	// Set by the @Setup method, which JMH runs before any benchmark method.
	@SuppressWarnings("NullAway.Init")
	private AtlasLoadBalancer loadBalancer;

	/** Builds the load balancer with the limit of the trial. */
	@Setup(Level.Trial)
	public void setUp() {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		InstanceAttributesParser parser = new InstanceAttributesParser(Fixtures.SERVICE_ID, "version", meters);
		List<ServiceInstance> fleet = Fixtures.fleet(100, System.currentTimeMillis() - 3_600_000);
		WeightedRandomBalancer strategy = new WeightedRandomBalancer(
				new StrategySettings(Fixtures.SERVICE_ID, parser, AllZeroWeightsPolicy.FAIL_OPEN, meters));
		this.loadBalancer = new AtlasLoadBalancer(Fixtures.SERVICE_ID, new Just<>(new FixedListSupplier(fleet)),
				new ServicePipeline(
						new Pipeline(new SnapshotCache(parser), List.of(), List.of(), strategy.name(), strategy)),
				this.stats, new InFlightLimit("on".equals(this.limit) ? LIMIT : InFlightLimit.OFF));
		request();
	}

	/**
	 * A pick and the request's start and completion (1 ms).
	 * @return the instance, so that the work is not eliminated
	 */
	@Benchmark
	public ServiceInstance request() {
		ServiceInstance chosen = Objects.requireNonNull(
				Objects.requireNonNull(this.loadBalancer.chooseAndWait(this.request), "a response").getServer(),
				"an instance");
		this.stats.started(chosen);
		this.stats.completed(chosen, 1_000_000);
		return chosen;
	}

}
