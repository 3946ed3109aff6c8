package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.atlas.autoconfigure.ServiceSettings;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.outlier.ProbeRules;
import dev.atlas.loadbalancer.outlier.Probes;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.routing.AffinityRules;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.support.InstanceProbe;
import dev.atlas.loadbalancer.support.Scheduler;
import dev.atlas.loadbalancer.weighting.SlowStart;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * The routing of one service as its rules change at runtime: puts a new {@link Pipeline}
 * version in force in the service's {@link ServicePipeline} when {@link RuntimeRules}
 * accepts a change. One per load-balancer child context, registered with
 * {@link RuntimeRules} for as long as the context lives.
 *
 * <p>
 * A new version keeps what still applies: the application's own adjusters and filters,
 * retry avoidance, the live statistics ({@link InstanceStats}: in-flight requests,
 * latencies), what warmup has seen of the instances (their ages), outlier detection's
 * failure counts and ejections, and the strategy with its state unless the
 * {@code loadbalancer} settings changed. Atlas's own gray router, warmup, outlier
 * ejection and affinity filter are replaced by new ones under the new rules when theirs
 * changed (an application's bean that replaced one of them is kept as it is).
 *
 * <p>
 * Thread-safe: changes are serialized; reads are lock-free.
 *
 * @since 0.1.0
 */
public final class ServiceRouting implements DisposableBean {

	private final String serviceId;

	private final ServicePipeline pipeline;

	private final Parts parts;

	private final RuntimeRules rules;

	private volatile ServiceSettings settings;

	private volatile @Nullable FunctionCounter picks;

	private volatile @Nullable Instant changedAt;

	// The built-in steps in the version in force (null: not in the pipeline); written
	// under this object's lock.
	private volatile @Nullable GrayRouter gray;

	private volatile @Nullable SlowStart slowStart;

	private volatile @Nullable OutlierEjection ejection;

	private volatile @Nullable ClusterAffinity clusterAffinity;

	/**
	 * Creates the routing of a service and registers it for runtime changes.
	 * @param serviceId the service
	 * @param pipeline the service's routing, shared by its stage and load balancer
	 * @param settings the settings the first version was built with
	 * @param parts what new versions are built from
	 * @param rules where runtime changes come from
	 */
	ServiceRouting(String serviceId, ServicePipeline pipeline, ServiceSettings settings, Parts parts,
			RuntimeRules rules) {
		this.serviceId = serviceId;
		this.pipeline = pipeline;
		this.settings = settings;
		this.parts = parts;
		this.rules = rules;
		Pipeline first = pipeline.current();
		this.gray = builtIn(first, parts.gray());
		this.slowStart = builtIn(first, parts.slowStart());
		this.ejection = builtIn(first, parts.ejection());
		this.clusterAffinity = builtIn(first, parts.clusterAffinity());
		this.picks = registerPicks(first.strategyName());
		rules.register(this);
	}

	private static <T> @Nullable T builtIn(Pipeline version, @Nullable T step) {
		if (step == null) {
			return null;
		}
		return (version.adjusters().contains(step) || version.filters().contains(step)) ? step : null;
	}

	/**
	 * The service.
	 * @return the service id
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * The settings in force.
	 * @return never {@code null}
	 */
	public ServiceSettings settings() {
		return this.settings;
	}

	/**
	 * The affinity rules of the version in force, as its affinity filter holds them.
	 * @return {@code null} when Atlas's affinity filter is not in the pipeline (affinity
	 * off, or replaced by an application's bean), or before its first request resolved
	 * the caller's cluster
	 */
	public @Nullable AffinityRules affinity() {
		ClusterAffinity filter = this.clusterAffinity;
		return (filter != null) ? filter.resolvedRules() : null;
	}

	/**
	 * The rules in force as plain values (see {@code /actuator/atlas}).
	 * @return an ordered map
	 */
	public Map<String, @Nullable Object> rulesView() {
		return RulesView.of(this.settings, affinity());
	}

	/**
	 * When the rules last changed at runtime.
	 * @return {@code null} when they are still those of startup
	 */
	public @Nullable Instant changedAt() {
		return this.changedAt;
	}

	/**
	 * Warmup in the version in force.
	 * @return {@code null} when warmup is not in the pipeline
	 */
	public @Nullable SlowStart slowStart() {
		return slowStart(this.pipeline.current());
	}

	/**
	 * Instances still warming up in the version in force (the
	 * {@value AtlasLoadBalancerClientConfiguration#WARMING_METER} gauge).
	 * @param pipeline a service's routing
	 * @return {@code 0} when warmup is not in the pipeline
	 */
	static double warmingInstances(ServicePipeline pipeline) {
		SlowStart warmup = slowStart(pipeline.current());
		return (warmup != null) ? warmup.warmingInstances() : 0;
	}

	/**
	 * Warmup in a version.
	 * @param version a version
	 * @return its first {@link SlowStart} adjuster, or {@code null}
	 */
	static @Nullable SlowStart slowStart(Pipeline version) {
		for (WeightAdjuster adjuster : version.adjusters()) {
			if (adjuster instanceof SlowStart warmup) {
				return warmup;
			}
		}
		return null;
	}

	/**
	 * Puts new rules in force: first builds what may fail (the strategy, the new steps,
	 * the probes), so that a failure leaves everything as it was; then applies the
	 * changes to what is kept (the outlier detector's rules, the statistics' decay time,
	 * the stale check) and swaps the version.
	 * @param next the new settings, checked
	 * @param nextAffinity the caller's new affinity rules; {@code null} to keep the
	 * affinity filter as it is (the caller's cluster is not resolved yet: the filter
	 * resolves the rules in force at its first request)
	 * @param now when the change is made
	 * @throws RuntimeException if the next version cannot be built (e.g. the strategy's
	 * factory throws); nothing changed then
	 */
	synchronized void apply(ServiceSettings next, @Nullable AffinityRules nextAffinity, Instant now) {
		ServiceSettings previous = this.settings;
		Pipeline current = this.pipeline.current();
		boolean loadbalancerChanges = !next.strategy().equals(previous.strategy())
				|| next.allZeroWeights() != previous.allZeroWeights()
				|| !next.leastRequest().equals(previous.leastRequest()) || !next.peakEwma().equals(previous.peakEwma())
				|| !next.hash().equals(previous.hash());
		LoadBalancingStrategy strategy = loadbalancerChanges ? this.parts.strategies()
			.create(next.strategy(), new StrategySettings(this.serviceId, this.parts.parser(), next.allZeroWeights(),
					this.parts.meters()))
				: current.strategy();
		GrayRouter nextGray = (this.gray != null && !next.gray().equals(previous.gray()))
				? new GrayRouter(this.serviceId, next.gray(), this.parts.meters()) : this.gray;
		SlowStart nextSlowStart = (this.slowStart != null && !next.warmup().equals(previous.warmup()))
				? this.slowStart.withRules(next.warmup()) : this.slowStart;
		AffinityRules before = affinity();
		ClusterAffinity nextClusterAffinity = (nextAffinity != null && before != null && !nextAffinity.equals(before))
				? new ClusterAffinity(this.serviceId, nextAffinity, this.parts.meters(), this.parts.clock())
				: this.clusterAffinity;
		boolean outlierChanges = !next.outlier().equals(previous.outlier());
		OutlierDetector detector = this.parts.detector();
		InstanceProbe probe = (outlierChanges && detector != null) ? Probes.of(next.outlier().probe()) : null;
		LastKnownGood lastKnownGood = this.parts.lastKnownGood();
		ProbeRules probeRules = next.outlier().probe();
		LastKnownGood.StaleCheck staleCheck = (lastKnownGood != null
				&& (!probeRules.timeout().equals(previous.outlier().probe().timeout())
						|| !probeRules.interval().equals(previous.outlier().probe().interval())))
								? new LastKnownGood.StaleCheck(Probes.tcp(probeRules.timeout()), this.parts.scheduler(),
										probeRules.interval())
								: null;
		// Nothing below throws: the live objects change only now.
		if (probe != null && detector != null) {
			detector.update(next.outlier(), probe);
		}
		OutlierEjection nextEjection = (this.ejection != null && probe != null && detector != null)
				? new OutlierEjection(detector) : this.ejection;
		if (!next.peakEwma().decayTime().equals(previous.peakEwma().decayTime())) {
			this.parts.stats().decayTime(next.peakEwma().decayTime());
		}
		if (staleCheck != null && lastKnownGood != null) {
			lastKnownGood.staleCheck(staleCheck);
		}
		List<WeightAdjuster> adjusters = new ArrayList<>();
		for (WeightAdjuster adjuster : current.adjusters()) {
			adjusters.add((adjuster == this.slowStart && nextSlowStart != null) ? nextSlowStart : adjuster);
		}
		List<CandidateFilter> filters = new ArrayList<>();
		for (CandidateFilter filter : current.filters()) {
			filters.add(replaced(filter, nextGray, nextEjection, nextClusterAffinity));
		}
		Pipeline version = new Pipeline(new SnapshotCache(this.parts.parser()), adjusters, filters, next.strategy(),
				strategy);
		this.pipeline.update((replaced) -> version);
		this.gray = nextGray;
		this.slowStart = nextSlowStart;
		this.ejection = nextEjection;
		this.clusterAffinity = nextClusterAffinity;
		this.settings = next;
		this.changedAt = now;
		if (!next.strategy().equals(previous.strategy())) {
			FunctionCounter old = this.picks;
			if (old != null) {
				this.parts.meters().remove(old);
			}
			this.picks = registerPicks(next.strategy());
		}
	}

	private CandidateFilter replaced(CandidateFilter filter, @Nullable GrayRouter nextGray,
			@Nullable OutlierEjection nextEjection, @Nullable ClusterAffinity nextClusterAffinity) {
		if (filter == this.gray && nextGray != null) {
			return nextGray;
		}
		if (filter == this.ejection && nextEjection != null) {
			return nextEjection;
		}
		if (filter == this.clusterAffinity && nextClusterAffinity != null) {
			return nextClusterAffinity;
		}
		return filter;
	}

	/**
	 * The {@value AtlasLoadBalancerClientConfiguration#PICKS_METER} counter, tagged with
	 * the strategy in force; read when scraped from the per-instance request counts (a
	 * pick itself writes no shared counter).
	 */
	private FunctionCounter registerPicks(String strategy) {
		return FunctionCounter
			.builder(AtlasLoadBalancerClientConfiguration.PICKS_METER, this.parts.stats(), InstanceStats::totalRequests)
			.description("Requests sent to instances chosen by Atlas (each attempt counts)")
			.tag("service", this.serviceId)
			.tag("strategy", strategy)
			.register(this.parts.meters());
	}

	/**
	 * Unregisters from runtime changes when the child context closes.
	 */
	@Override
	public void destroy() {
		this.rules.unregister(this);
	}

	@Override
	public String toString() {
		return "ServiceRouting[" + this.serviceId + ", " + this.pipeline.current() + ']';
	}

	/**
	 * What new versions of a service's routing are built from.
	 *
	 * @param parser parses lists into snapshots (one cache per version)
	 * @param strategies creates strategies by name
	 * @param meters where the service's meters are registered
	 * @param stats the service's live statistics
	 * @param detector the service's outlier detector, or {@code null}
	 * @param lastKnownGood the service's last-known-good guard, or {@code null}
	 * @param scheduler runs stale-list checks
	 * @param clock the time of spill-over warnings
	 * @param gray the gray router bean, or {@code null}
	 * @param slowStart the warmup bean, or {@code null}
	 * @param ejection the outlier ejection bean, or {@code null}
	 * @param clusterAffinity the affinity bean, or {@code null}
	 */
	record Parts(InstanceAttributesParser parser, StrategyRegistry strategies, MeterRegistry meters,
			InstanceStats stats, @Nullable OutlierDetector detector, @Nullable LastKnownGood lastKnownGood,
			Scheduler scheduler, Clock clock, @Nullable GrayRouter gray, @Nullable SlowStart slowStart,
			@Nullable OutlierEjection ejection, @Nullable ClusterAffinity clusterAffinity) {

		Parts {
			Objects.requireNonNull(parser, "parser");
			Objects.requireNonNull(strategies, "strategies");
			Objects.requireNonNull(meters, "meters");
			Objects.requireNonNull(stats, "stats");
		}

	}

}
