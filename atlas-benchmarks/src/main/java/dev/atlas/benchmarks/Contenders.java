package dev.atlas.benchmarks;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import dev.atlas.benchmarks.Fixtures.FixedListSupplier;
import dev.atlas.benchmarks.Fixtures.Just;
import dev.atlas.loadbalancer.choice.Balancer;
import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.choice.WeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.orca.LoadReport;
import dev.atlas.loadbalancer.orca.ReportedLoad;
import dev.atlas.loadbalancer.orca.WeightRules;
import dev.atlas.loadbalancer.outlier.Outcome;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.routing.AffinityMeters;
import dev.atlas.loadbalancer.routing.AffinityMode;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.CallerZones;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.weighting.SlowStart;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.WeightedServiceInstanceListSupplier;

/**
 * Every load balancer of the comparison, over one fleet, wired as in production. The
 * Reactor-level ones are all {@link ReactorServiceInstanceLoadBalancer}s fed by an
 * {@code ObjectProvider} of a supplier that emits the same list object each time; a pick
 * is {@code choose(request).block()}, which is what Spring Cloud's
 * {@code BlockingLoadBalancerClient} (RestTemplate, RestClient) does.
 */
public final class Contenders {

	/** The fleet, the very list every supplier emits. */
	public final List<ServiceInstance> fleet;

	/**
	 * Meters of the Atlas components: a real, in-memory registry (an application has one,
	 * e.g. Prometheus's).
	 */
	public final MeterRegistry meters = new SimpleMeterRegistry();

	/** A request without the tag header. */
	public final Request<RequestDataContext> plain = Fixtures.request(null);

	/** A request with {@code X-Service-Version: v2}. */
	public final Request<RequestDataContext> tagged = Fixtures.request(Fixtures.CANARY_TAG);

	/** Spring Cloud's default. */
	public final ReactorServiceInstanceLoadBalancer springRoundRobin;

	/** Spring Cloud's random. */
	public final ReactorServiceInstanceLoadBalancer springRandom;

	/**
	 * Spring Cloud's {@code WeightedServiceInstanceListSupplier} under its round robin,
	 * over the list that supplier expands by weight (once, as Spring's caching supplier
	 * above it serves it between refreshes).
	 */
	public final ReactorServiceInstanceLoadBalancer springWeighted;

	/**
	 * Spring Cloud Alibaba's {@code NacosLoadBalancer} (its flag on), caller in cluster
	 * {@code a}.
	 */
	public final ReactorServiceInstanceLoadBalancer nacos;

	/** Atlas weighted random, directly over the list (no routing stage). */
	public final AtlasLoadBalancer atlasWeightedRandom;

	/** Atlas smooth weighted round robin, directly over the list. */
	public final AtlasLoadBalancer atlasSmoothRoundRobin;

	/**
	 * Atlas's whole chain as its auto-configuration builds it: last-known-good (stale
	 * limit 60 s) → snapshot → warmup (defaults) → gray (10 % canary to v2 for untagged
	 * requests) → outlier ejection (defaults, nothing ejected) → cluster affinity (caller
	 * in {@code a}) → weighted random.
	 */
	public final AtlasLoadBalancer atlasChain;

	/**
	 * The same chain with one baseline instance of cluster {@code a} ejected as an
	 * outlier (the third of the fleet, index 2): ejection is looked up per snapshot, not
	 * per request.
	 */
	public final AtlasLoadBalancer atlasChainEjected;

	/**
	 * The chain of {@link #atlasChain} with cluster affinity in proportional mode:
	 * callers 3 in zone {@code a} for 1 in {@code b}, providers half in each, so that
	 * about a third of the caller's picks go to the other zone (the draw and the zone
	 * look-up are exercised, not only the local zone).
	 */
	public final AtlasLoadBalancer atlasChainProportional;

	/** The affinity filter of {@link #atlasChainProportional}. */
	public final ClusterAffinity proportionalAffinity;

	/**
	 * The chain of {@link #atlasChain} with two lane rules: cookie {@code canary=1} → v2,
	 * then header {@code X-User-Group: beta} → v2.
	 */
	public final AtlasLoadBalancer atlasChainLaneRules;

	/** A request with {@code X-User-Group: beta} and no tag. */
	public final Request<RequestDataContext> beta = Fixtures.request(null, null, "X-User-Group", "beta");

	/**
	 * Requests with {@value Fixtures#USER_HEADER} {@code user-0} … {@code user-63}, for
	 * {@code ring-hash}.
	 */
	public final List<Request<RequestDataContext>> keyed;

	/**
	 * The live statistics the load-aware contenders read: every instance has had one
	 * response (5 to 14 ms) and has 0, 1 or 2 requests in flight.
	 */
	public final InstanceStats busy = new InstanceStats();

	/** Atlas least request (power of two choices), directly over the list. */
	public final AtlasLoadBalancer atlasLeastRequest;

	/** Atlas peak EWMA (power of two choices), directly over the list. */
	public final AtlasLoadBalancer atlasPeakEwma;

	/**
	 * Atlas weighted round robin from reported load, directly over the list: every
	 * instance has reported (weights 1, 2 and 3 in turn, in force past the blackout).
	 */
	public final AtlasLoadBalancer atlasWeightedRoundRobin;

	/** Atlas ring hash on {@value Fixtures#USER_HEADER}, directly over the list. */
	public final AtlasLoadBalancer atlasRingHash;

	/**
	 * Atlas ring hash with bounded load: every instance but a third has requests in
	 * flight, so most picks compute the bound (the in-flight total of up to 64
	 * instances).
	 */
	public final AtlasLoadBalancer atlasRingHashBounded;

	/** The bare engine, weighted random. */
	public final Balancer engineWeightedRandom;

	/** The bare engine, smooth weighted round robin. */
	public final Balancer engineSmoothRoundRobin;

	/**
	 * Builds every contender over a fleet of {@code size} instances
	 * ({@link Fixtures#fleet}).
	 * @param size number of instances
	 */
	public Contenders(int size) {
		this.fleet = Fixtures.fleet(size, System.currentTimeMillis());
		Just<ServiceInstanceListSupplier> plainSupplier = new Just<>(new FixedListSupplier(this.fleet));
		String id = Fixtures.SERVICE_ID;
		this.springRoundRobin = new RoundRobinLoadBalancer(plainSupplier, id);
		this.springRandom = new RandomLoadBalancer(plainSupplier, id);
		// Spring's weighted chain is discovery -> weighted -> caching: the expanded list
		// is computed once per
		// refresh and served from the cache, so it is expanded once here too, not on
		// every pick.
		List<ServiceInstance> expanded = Objects.requireNonNull(
				new WeightedServiceInstanceListSupplier(new FixedListSupplier(this.fleet)).get().blockFirst(),
				"the weighted list");
		this.springWeighted = new RoundRobinLoadBalancer(new Just<>(new FixedListSupplier(expanded)), id);
		this.nacos = Fixtures.nacosLoadBalancer(plainSupplier, Fixtures.CALLER_CLUSTER);

		this.atlasWeightedRandom = atlas(plainSupplier, WeightedRandomBalancer.FACTORY);
		this.atlasSmoothRoundRobin = atlas(plainSupplier, SmoothWeightedRoundRobinBalancer.FACTORY);

		Clock clock = Clock.systemUTC();
		GrayRules gray = new GrayRules(Fixtures.TAG_HEADER, null, GrayFallback.BASELINE, true, Set.of(),
				Map.of(Fixtures.CANARY_TAG, 10.0), null);
		this.atlasChain = chain(gray, outlierDetector(clock), WeightedRandomBalancer.FACTORY);
		OutlierDetector proportionalOutliers = outlierDetector(clock);
		// minimum cluster size 0: zone routing is on at every fleet size measured
		AffinityRules proportional = new AffinityRules(Fixtures.CALLER_CLUSTER, AffinityMode.PROPORTIONAL, 0.1, 1, 0);
		CallerZones callers = new CallerZones(Map.of("a", 3, "b", 1), 0);
		this.proportionalAffinity = new ClusterAffinity(Fixtures.SERVICE_ID, () -> proportional, () -> callers,
				proportionalOutliers, () -> false, new AffinityMeters(Fixtures.SERVICE_ID, this.meters), clock);
		this.atlasChainProportional = chain(gray, proportionalOutliers, this.proportionalAffinity,
				WeightedRandomBalancer.FACTORY);
		OutlierDetector ejecting = outlierDetector(clock);
		// The fleet as the chain will list it: max-ejection-percent is a share of it.
		InstanceSnapshot listed = InstanceSnapshot.of(this.fleet, parser());
		ejecting.instances(() -> listed);
		for (int i = 0; i < OutlierRules.DEFAULTS.consecutiveGatewayFailure(); i++) {
			ejecting.record(this.fleet.get(2), Outcome.GATEWAY_FAILURE, null);
		}
		this.atlasChainEjected = chain(gray, ejecting, WeightedRandomBalancer.FACTORY);
		GrayRules laneRules = new GrayRules(Fixtures.TAG_HEADER, null, GrayFallback.BASELINE, true, Set.of(),
				Map.of(Fixtures.CANARY_TAG, 10.0), null,
				List.of(new LaneRule(Fixtures.CANARY_TAG, LaneRule.Source.COOKIE, "canary", LaneRule.Match.EQUALS,
						List.of("1")),
						new LaneRule(Fixtures.CANARY_TAG, LaneRule.Source.HEADER, "X-User-Group", LaneRule.Match.EQUALS,
								List.of("beta"))));
		this.atlasChainLaneRules = chain(laneRules, outlierDetector(clock), WeightedRandomBalancer.FACTORY);

		for (int i = 0; i < this.fleet.size(); i++) {
			ServiceInstance instance = this.fleet.get(i);
			this.busy.started(instance);
			this.busy.completed(instance, (5 + i % 10) * 1_000_000L);
			for (int inFlight = 0; inFlight < i % 3; inFlight++) {
				this.busy.started(instance);
			}
		}
		List<Request<RequestDataContext>> requests = new ArrayList<>();
		for (int user = 0; user < PickBenchmark.KEYS; user++) {
			requests.add(Fixtures.request(null, "user-" + user));
		}
		this.keyed = List.copyOf(requests);
		this.atlasLeastRequest = atlas(plainSupplier,
				LeastRequestBalancer.factory((service) -> LeastRequestRules.DEFAULTS), this.busy);
		this.atlasPeakEwma = atlas(plainSupplier, PeakEwmaBalancer.factory((service) -> PeakEwmaRules.DEFAULTS),
				this.busy);
		// reports on a clock moved past the blackout period, recomputed at once
		AtomicLong reportClock = new AtomicLong();
		ReportedLoad reported = new ReportedLoad(WeightRules.DEFAULTS, (task, delay) -> task.run(), reportClock::get);
		for (int i = 0; i < this.fleet.size(); i++) {
			reported.record(InstanceKey.of(this.fleet.get(i)), new LoadReport(0.5, 0, 50.0 * (1 + i % 3), 0));
		}
		reportClock.addAndGet(WeightRules.DEFAULTS.blackoutPeriod().toNanos());
		reported.update();
		this.atlasWeightedRoundRobin = atlas(plainSupplier, WeightedRoundRobinBalancer.factory((service) -> reported),
				this.busy);
		this.atlasRingHash = atlas(plainSupplier,
				RingHashBalancer.factory((service) -> new HashRules(Fixtures.USER_HEADER, null,
						HashRules.DEFAULT_VIRTUAL_NODES, false, HashRules.DEFAULT_LOAD_FACTOR)),
				this.busy);
		this.atlasRingHashBounded = atlas(plainSupplier,
				RingHashBalancer.factory((service) -> new HashRules(Fixtures.USER_HEADER, null,
						HashRules.DEFAULT_VIRTUAL_NODES, true, HashRules.DEFAULT_LOAD_FACTOR)),
				this.busy);

		this.engineWeightedRandom = balancer(WeightedRandomBalancer.FACTORY);
		this.engineSmoothRoundRobin = balancer(SmoothWeightedRoundRobinBalancer.FACTORY);
	}

	private OutlierDetector outlierDetector(Clock clock) {
		// Probes never run here: the scheduler drops them.
		return new OutlierDetector(Fixtures.SERVICE_ID, OutlierRules.DEFAULTS, clock, (instance) -> true,
				(task, delay) -> {
				}, this.meters);
	}

	/**
	 * Atlas's stage and load balancer as the auto-configuration builds them: sharing one
	 * {@link ServicePipeline}, so a request reads the rules in force once.
	 */
	private AtlasLoadBalancer chain(GrayRules gray, OutlierDetector outliers, StrategyFactory strategy) {
		return chain(gray, outliers, new ClusterAffinity(Fixtures.SERVICE_ID, AffinityRules.of(Fixtures.CALLER_CLUSTER),
				this.meters, Clock.systemUTC()), strategy);
	}

	private AtlasLoadBalancer chain(GrayRules gray, OutlierDetector outliers, ClusterAffinity affinity,
			StrategyFactory strategy) {
		String id = Fixtures.SERVICE_ID;
		Clock clock = Clock.systemUTC();
		ServicePipeline pipeline = new ServicePipeline(new Pipeline(new SnapshotCache(parser()),
				List.of(new SlowStart(WarmupRules.DEFAULTS, clock)), List.of(new GrayRouter(id, gray, this.meters),
						new OutlierEjection(outliers), affinity, new RetryAvoidance()),
				strategy.name(), balancer(strategy)));
		AtlasServiceInstanceListSupplier stage = new AtlasServiceInstanceListSupplier(new FixedListSupplier(this.fleet),
				new LastKnownGood(id, Duration.ofSeconds(60), clock, this.meters), pipeline);
		outliers.instances(stage::lastSeen);
		return new AtlasLoadBalancer(id, new Just<>(stage), pipeline, new InstanceStats());
	}

	private InstanceAttributesParser parser() {
		return new InstanceAttributesParser(Fixtures.SERVICE_ID, "version", this.meters);
	}

	/**
	 * An {@code AtlasLoadBalancer} as the auto-configuration builds it, with its
	 * {@link InstanceStats} (the {@code atlas.picks} meter reads them when scraped).
	 * Per-request statistics (Atlas's, like Spring Cloud's {@code loadbalancer.requests}
	 * meters) are kept by the request lifecycle, around the HTTP call, not in
	 * {@code choose}: no contender pays for them here.
	 */
	private AtlasLoadBalancer atlas(ObjectProvider<ServiceInstanceListSupplier> suppliers, StrategyFactory strategy) {
		return atlas(suppliers, strategy, new InstanceStats());
	}

	private AtlasLoadBalancer atlas(ObjectProvider<ServiceInstanceListSupplier> suppliers, StrategyFactory strategy,
			InstanceStats stats) {
		return new AtlasLoadBalancer(Fixtures.SERVICE_ID, suppliers, new ServicePipeline(
				new Pipeline(new SnapshotCache(parser()), List.of(), List.of(), strategy.name(), balancer(strategy))),
				stats);
	}

	private Balancer balancer(StrategyFactory strategy) {
		return (Balancer) strategy
			.create(new StrategySettings(Fixtures.SERVICE_ID, parser(), AllZeroWeightsPolicy.FAIL_OPEN, this.meters));
	}

	/**
	 * One pick through a Reactor-level load balancer, as the application's blocking
	 * client makes it: Spring's {@code BlockingLoadBalancerClient} calls
	 * {@code choose(request).block()}; with Atlas, its
	 * {@code AtlasBlockingLoadBalancerClient} calls
	 * {@link AtlasLoadBalancer#chooseAndWait} on Atlas's load balancers.
	 * @param loadBalancer the load balancer
	 * @param request the request
	 * @return the chosen instance
	 */
	public static @Nullable ServiceInstance pick(ReactorServiceInstanceLoadBalancer loadBalancer, Request<?> request) {
		if (loadBalancer instanceof AtlasLoadBalancer atlas) {
			return server(atlas.chooseAndWait(request));
		}
		return blocked(loadBalancer, request);
	}

	/**
	 * One pick through {@code choose(request).block()}, whichever the load balancer.
	 * @param loadBalancer the load balancer
	 * @param request the request
	 * @return the chosen instance
	 */
	public static @Nullable ServiceInstance blocked(ReactorServiceInstanceLoadBalancer loadBalancer,
			Request<?> request) {
		return server(loadBalancer.choose(request).block());
	}

	/**
	 * One pick subscribed to as a Reactor operator subscribes (WebClient's load-balancing
	 * filter, the gateway): {@code choose(request).subscribe(subscriber)}, with a
	 * subscriber that requests everything and keeps the response. The supplier answers at
	 * once, so the response is there when {@code subscribe} returns.
	 * @param loadBalancer the load balancer
	 * @param request the request
	 * @return the chosen instance
	 */
	public static @Nullable ServiceInstance subscribed(ReactorServiceInstanceLoadBalancer loadBalancer,
			Request<?> request) {
		Taken taken = new Taken();
		loadBalancer.choose(request).subscribe(taken);
		if (taken.error != null) {
			throw new IllegalStateException("the pick failed", taken.error);
		}
		return server(taken.response);
	}

	private static @Nullable ServiceInstance server(@Nullable Response<ServiceInstance> response) {
		return (response != null && response.hasServer()) ? response.getServer() : null;
	}

	/**
	 * Makes one pick through each contender, so that per-snapshot work is done before
	 * measuring.
	 */
	public void prime() {
		for (ReactorServiceInstanceLoadBalancer loadBalancer : List.of(this.springRoundRobin, this.springRandom,
				this.springWeighted, this.nacos, this.atlasWeightedRandom, this.atlasSmoothRoundRobin)) {
			requirePick(pick(loadBalancer, this.plain), loadBalancer);
		}
		requirePick(pick(this.atlasChain, this.plain), this.atlasChain);
		requirePick(pick(this.atlasChain, this.tagged), this.atlasChain);
		requirePick(subscribed(this.atlasChain, this.plain), this.atlasChain);
		requirePick(blocked(this.atlasChain, this.plain), this.atlasChain);
		requirePick(subscribed(this.springRoundRobin, this.plain), this.springRoundRobin);
		requirePick(pick(this.atlasChainEjected, this.plain), this.atlasChainEjected);
		requirePick(pick(this.atlasChainProportional, this.plain), this.atlasChainProportional);
		if (!Boolean.TRUE.equals(this.proportionalAffinity.zoneRouting().get("active"))) {
			throw new IllegalStateException(
					"proportional zone routing is off: " + this.proportionalAffinity.zoneRouting());
		}
		requirePick(pick(this.atlasChainLaneRules, this.beta), this.atlasChainLaneRules);
		requirePick(pick(this.atlasLeastRequest, this.plain), this.atlasLeastRequest);
		requirePick(pick(this.atlasPeakEwma, this.plain), this.atlasPeakEwma);
		requirePick(pick(this.atlasWeightedRoundRobin, this.plain), this.atlasWeightedRoundRobin);
		requirePick(pick(this.atlasRingHash, this.keyed.get(0)), this.atlasRingHash);
		requirePick(pick(this.atlasRingHashBounded, this.keyed.get(0)), this.atlasRingHashBounded);
		requirePick(this.engineWeightedRandom.choose(this.fleet), this.engineWeightedRandom);
		requirePick(this.engineSmoothRoundRobin.choose(this.fleet), this.engineSmoothRoundRobin);
	}

	private static void requirePick(@Nullable ServiceInstance chosen, Object by) {
		if (chosen == null) {
			throw new IllegalStateException(by + " chose nothing");
		}
	}

	/** Keeps the one response of a subscribed pick. */
	private static final class Taken implements CoreSubscriber<Response<ServiceInstance>> {

		@Nullable Response<ServiceInstance> response;

		@Nullable Throwable error;

		@Override
		public void onSubscribe(Subscription subscription) {
			subscription.request(Long.MAX_VALUE);
		}

		@Override
		public void onNext(Response<ServiceInstance> next) {
			this.response = next;
		}

		@Override
		public void onError(Throwable failure) {
			this.error = failure;
		}

		@Override
		public void onComplete() {
		}

	}

}
