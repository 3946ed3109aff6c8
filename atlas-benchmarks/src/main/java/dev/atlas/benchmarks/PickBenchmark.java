package dev.atlas.benchmarks;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
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

/**
 * The cost of one pick, for every contender of {@link Contenders}, over fleets of 10 to
 * 10,000 instances. Concrete subclasses fix the number of threads ({@link Picks1Thread},
 * {@link Picks2Threads}) so that one JMH invocation measures both. The load balancers are
 * shared by the threads of a trial ({@link Scope#Benchmark}), as one load balancer per
 * service is shared by all request threads in production, so round-robin counters are
 * contended for real.
 *
 * <p>
 * Each benchmark returns the chosen instance (JMH consumes it). The defaults below are
 * the full run's; {@code run.sh} passes them explicitly too. Four seconds of warmup,
 * because on 2 cores the Reactor pipelines reach their steady state only after 3 to 4 s
 * (the JIT compiles them in the background); two forks, because the JIT does not compile
 * a Reactor pipeline the same way in every JVM (single forks of Spring's round robin
 * measured anywhere from 78 to 135 ns per pick on this machine, each stable in itself).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 2, time = 1)
public abstract class PickBenchmark {

	/** User ids the ring-hash contenders draw from. */
	static final int KEYS = 64;

	/** Number of instances of the service. */
	@Param({ "10", "100", "1000", "10000" })
	public int instances;

	// Set by the @Setup method, which JMH runs before any benchmark method.
	@SuppressWarnings("NullAway.Init")
	private Contenders c;

	/** Builds the fleet and the load balancers, and picks once through each. */
	@Setup(Level.Trial)
	public void setUp() {
		this.c = new Contenders(this.instances);
		this.c.prime();
	}

	/**
	 * Spring Cloud's {@code RoundRobinLoadBalancer}: the baseline of every ratio but the
	 * subscribed rows'.
	 */
	@Benchmark
	public @Nullable ServiceInstance springRoundRobin() {
		return Contenders.pick(this.c.springRoundRobin, this.c.plain);
	}

	/**
	 * Spring Cloud's {@code RoundRobinLoadBalancer}, subscribed to as WebClient's
	 * load-balancing filter and the gateway do: the baseline of
	 * {@link #atlasChainSubscribed}.
	 */
	@Benchmark
	public @Nullable ServiceInstance springRoundRobinSubscribed() {
		return Contenders.subscribed(this.c.springRoundRobin, this.c.plain);
	}

	/** Spring Cloud's {@code RandomLoadBalancer}. */
	@Benchmark
	public @Nullable ServiceInstance springRandom() {
		return Contenders.pick(this.c.springRandom, this.c.plain);
	}

	/**
	 * Spring Cloud's {@code WeightedServiceInstanceListSupplier} +
	 * {@code RoundRobinLoadBalancer}.
	 */
	@Benchmark
	public @Nullable ServiceInstance springWeightedRoundRobin() {
		return Contenders.pick(this.c.springWeighted, this.c.plain);
	}

	/** Spring Cloud Alibaba's {@code NacosLoadBalancer}. */
	@Benchmark
	public @Nullable ServiceInstance nacos() {
		return Contenders.pick(this.c.nacos, this.c.plain);
	}

	/** Atlas weighted random through {@code AtlasLoadBalancer}. */
	@Benchmark
	public @Nullable ServiceInstance atlasWeightedRandom() {
		return Contenders.pick(this.c.atlasWeightedRandom, this.c.plain);
	}

	/** Atlas smooth weighted round robin through {@code AtlasLoadBalancer}. */
	@Benchmark
	public @Nullable ServiceInstance atlasSmoothRoundRobin() {
		return Contenders.pick(this.c.atlasSmoothRoundRobin, this.c.plain);
	}

	/** Atlas's full chain, request without tag (10 % of them go to the canary lane). */
	@Benchmark
	public @Nullable ServiceInstance atlasChain() {
		return Contenders.pick(this.c.atlasChain, this.c.plain);
	}

	/**
	 * Atlas's full chain with cluster affinity in proportional mode (a third of the picks
	 * go to the other zone), request without tag: against {@link #atlasChain}, the cost
	 * of zone-aware routing.
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasChainProportional() {
		return Contenders.pick(this.c.atlasChainProportional, this.c.plain);
	}

	/**
	 * Atlas's full chain with one baseline instance ejected as an outlier, request
	 * without tag.
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasChainEjected() {
		return Contenders.pick(this.c.atlasChainEjected, this.c.plain);
	}

	/**
	 * Atlas's full chain, request without tag, subscribed to as WebClient's
	 * load-balancing filter and the gateway do.
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasChainSubscribed() {
		return Contenders.subscribed(this.c.atlasChain, this.c.plain);
	}

	/**
	 * Atlas's full chain, request without tag, through {@code choose(request).block()}
	 * (what Spring's blocking client would do; Atlas's calls {@code chooseAndWait}).
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasChainBlocked() {
		return Contenders.blocked(this.c.atlasChain, this.c.plain);
	}

	/** Atlas's full chain, request with {@code X-Service-Version: v2}. */
	@Benchmark
	public @Nullable ServiceInstance atlasChainTagged() {
		return Contenders.pick(this.c.atlasChain, this.c.tagged);
	}

	/**
	 * Atlas's full chain with two lane rules (a cookie rule that does not match, then a
	 * header rule that does), request with {@code X-User-Group: beta}.
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasChainLaneRule() {
		return Contenders.pick(this.c.atlasChainLaneRules, this.c.beta);
	}

	/** Atlas least request through {@code AtlasLoadBalancer}, with requests in flight. */
	@Benchmark
	public @Nullable ServiceInstance atlasLeastRequest() {
		return Contenders.pick(this.c.atlasLeastRequest, this.c.plain);
	}

	/** Atlas peak EWMA through {@code AtlasLoadBalancer}, with latencies known. */
	@Benchmark
	public @Nullable ServiceInstance atlasPeakEwma() {
		return Contenders.pick(this.c.atlasPeakEwma, this.c.plain);
	}

	/**
	 * Atlas weighted round robin through {@code AtlasLoadBalancer}, with the weights of
	 * reports in force (the static stride scheduler of gRFC A58).
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasWeightedRoundRobin() {
		return Contenders.pick(this.c.atlasWeightedRoundRobin, this.c.plain);
	}

	/**
	 * Atlas ring hash through {@code AtlasLoadBalancer}, over {@value #KEYS} user ids,
	 * one drawn per pick with {@code ThreadLocalRandom} (a few ns). {@value #KEYS}
	 * requests stay in the CPU's caches, as the request an application has just built
	 * does; 1,024 prebuilt ones did not, and their cache misses added about 50 ns to
	 * every size. The ring's entries for {@value #KEYS} keys stay cached too: at 10,000
	 * instances (8 MB of ring) a lookup for a key seen rarely costs one or two cache
	 * misses more than shown.
	 */
	@Benchmark
	public @Nullable ServiceInstance atlasRingHash() {
		return Contenders.pick(this.c.atlasRingHash, this.c.keyed.get(ThreadLocalRandom.current().nextInt(KEYS)));
	}

	/** Atlas ring hash with bounded load, instances with requests in flight. */
	@Benchmark
	public @Nullable ServiceInstance atlasRingHashBounded() {
		return Contenders.pick(this.c.atlasRingHashBounded,
				this.c.keyed.get(ThreadLocalRandom.current().nextInt(KEYS)));
	}

	/** The bare engine: {@code Balancer.choose(list)}, weighted random, no Reactor. */
	@Benchmark
	public @Nullable ServiceInstance engineWeightedRandom() {
		return this.c.engineWeightedRandom.choose(this.c.fleet);
	}

	/**
	 * The bare engine: {@code Balancer.choose(list)}, smooth weighted round robin, no
	 * Reactor.
	 */
	@Benchmark
	public @Nullable ServiceInstance engineSmoothRoundRobin() {
		return this.c.engineSmoothRoundRobin.choose(this.c.fleet);
	}

}
