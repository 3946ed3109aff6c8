package dev.atlas.loadbalancer.routing;

import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.LaneHealth;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import dev.atlas.loadbalancer.support.UniformDraws;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.Ordered;

/**
 * Cluster affinity (locality): prefers the instances of the caller's own cluster or zone,
 * by one of three {@linkplain AffinityMode modes}.
 *
 * <p>
 * <strong>Threshold</strong> ({@link AffinityMode#THRESHOLD}) and <strong>strict</strong>
 * ({@link AffinityMode#STRICT}, as threshold with {@code min-instances} 1 and
 * {@code min-healthy-ratio} 0):
 * <ul>
 * <li>The caller has no cluster: every instance, no spill-over is counted or logged.</li>
 * <li>Usable instances are those not marked unhealthy (e.g. {@code nacos.healthy=false});
 * an instance without cluster metadata belongs to no cluster, so never to the
 * caller's.</li>
 * <li>The own cluster has at least {@code min-instances} usable instances and at least
 * {@code min-healthy-ratio} of its registered ones are usable: its usable instances
 * only.</li>
 * <li>Otherwise (spill-over): every usable instance of every cluster (every instance when
 * none is usable), counted per request in {@value AffinityMeters#SPILLOVER_METER}, with
 * at most one WARN per minute naming the cluster; when no instance at all carries the
 * caller's cluster, one WARN lists the clusters that were seen (the classic
 * {@code DEFAULT} vs {@code bj-zone-a} typo).</li>
 * </ul>
 *
 * <p>
 * <strong>Proportional</strong> ({@link AffinityMode#PROPORTIONAL}): zone-aware routing
 * as in Envoy. Per snapshot of the candidates (the request's lane after outlier
 * ejection), of the callers' spread ({@link CallerZones}) and of the ejections,
 * {@link ZoneShares} computes each zone's share of this caller's requests from the
 * callers and the providers' weights per zone and each zone's health (an instance marked
 * unhealthy or ejected is unhealthy; instances without zone metadata form one zone of
 * their own, which no caller is in); a request then draws its zone by those shares and
 * gets that zone's usable instances ({@value AffinityMeters#CROSS_ZONE_METER} counts
 * those sent to another zone than the caller's). When zone routing is off
 * ({@link ZoneShares.Inactive}: too few providers, the callers' spread unknown, no
 * capacity) the threshold rules apply; in outlier detection's panic mode (the candidates
 * still hold ejected instances) every candidate is used, as in Envoy. Each change of
 * whether zone routing is on, and why not, is logged once.
 *
 * <p>
 * The rules may be given late: they are then asked for once, at the first request, so
 * that a caller's cluster set up by a registry integration while the application starts
 * (Spring Cloud's {@code LoadBalancerZoneConfig}) is seen.
 *
 * <p>
 * Computed once per input snapshot (and callers' spread and ejections) and memoized on
 * it; a proportional pick adds one uniform draw and a scan of the zones' cumulative
 * shares. Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class ClusterAffinity implements CandidateFilter, Ordered {

	/**
	 * Counter of requests that spilled over out of the caller's cluster; tags
	 * {@code service}.
	 */
	public static final String SPILLOVER_METER = AffinityMeters.SPILLOVER_METER;

	/** Minimum interval between two spill-over WARNs of one service. */
	static final long WARN_INTERVAL_MILLIS = 60_000;

	/**
	 * The most lanes whose last decision is kept; more (tags that came and went) clear
	 * them.
	 */
	static final int MAX_LANES = 64;

	/** Why zone routing is off in outlier detection's panic mode. */
	static final String PANIC = "outlier detection is in panic mode";

	/** Why zone routing is off with a strategy that hashes request keys. */
	static final String HASHING = "the strategy hashes request keys (a key must keep reaching the same instance)";

	/** The name shown for the zone of the instances without zone metadata. */
	static final String NO_ZONE = "";

	private static final Logger log = LoggerFactory.getLogger(ClusterAffinity.class);

	private final String serviceId;

	private final Supplier<AffinityRules> rulesSource;

	// Written once, at the first request; a racing second thread resolves the same
	// rules again (the source memoizes), never different ones.
	private volatile @Nullable AffinityRules rules;

	private final Supplier<@Nullable CallerZones> callers;

	private final @Nullable LaneHealth health;

	private final AffinityMeters meters;

	private final Clock clock;

	private final @Nullable RandomGenerator random;

	private final AtomicLong lastWarn = new AtomicLong(Long.MIN_VALUE);

	private final OncePerKeyLog warnings = new OncePerKeyLog();

	/** The last decision of each lane, by the tag of its first candidate. */
	private final Map<String, LaneState> lanes = new ConcurrentHashMap<>();

	private final BooleanSupplier hashing;

	private volatile @Nullable ZoneDecision lastZones;

	// Built once: a method reference written at the call site would be a new object on
	// every request.
	private final Function<InstanceSnapshot, Decision> decide = this::decide;

	private final Function<InstanceSnapshot, ZoneMemo> zoneMemos = (snapshot) -> new ZoneMemo();

	/** The key of the proportional decisions memoized on a snapshot. */
	private final Object zoneKey = new Object();

	/**
	 * Creates the affinity of one service.
	 * @param serviceId the service
	 * @param rules the rules
	 * @param meterRegistry where the meters of {@link AffinityMeters} are registered; not
	 * {@code null}
	 * @param clock rate-limits the spill-over WARN
	 */
	public ClusterAffinity(String serviceId, AffinityRules rules, MeterRegistry meterRegistry, Clock clock) {
		this(serviceId, constant(Objects.requireNonNull(rules, "rules")), meterRegistry, clock);
		this.rules = rules;
	}

	/**
	 * Creates the affinity of one service whose rules are known only at the first
	 * request, without the callers' spread or outlier detection (proportional mode then
	 * applies the threshold rules).
	 * @param serviceId the service
	 * @param rules asked once, at the first request (or the first {@link #rules()} call),
	 * from whichever thread makes it; must not return {@code null}; should return the
	 * same rules when asked twice (two threads may race on the first request)
	 * @param meterRegistry where the meters of {@link AffinityMeters} are registered; not
	 * {@code null}
	 * @param clock rate-limits the spill-over WARN
	 */
	public ClusterAffinity(String serviceId, Supplier<AffinityRules> rules, MeterRegistry meterRegistry, Clock clock) {
		this(serviceId, rules, () -> null, null, () -> false, new AffinityMeters(serviceId, meterRegistry), clock,
				null);
	}

	/**
	 * Creates the affinity of one service.
	 * @param serviceId the service
	 * @param rules asked once, at the first request, as in
	 * {@link #ClusterAffinity(String, Supplier, MeterRegistry, Clock)}
	 * @param callers the callers' spread now, read on every proportional pick (one
	 * volatile read is expected): {@code null} while unknown; a new object only when the
	 * spread changed (decisions are memoized on its identity)
	 * @param health the service's outlier detection, whose ejected instances count as
	 * unhealthy; {@code null} without it
	 * @param hashing whether the service's strategy in force hashes request keys
	 * ({@code ring-hash}): zone routing is then off, as in Envoy, so that a key keeps
	 * reaching the same instance; asked once per decision, not per request
	 * @param meters the service's affinity meters, shared with the filters that replace
	 * this one
	 * @param clock rate-limits the spill-over WARN
	 */
	public ClusterAffinity(String serviceId, Supplier<AffinityRules> rules, Supplier<@Nullable CallerZones> callers,
			@Nullable LaneHealth health, BooleanSupplier hashing, AffinityMeters meters, Clock clock) {
		this(serviceId, rules, callers, health, hashing, meters, clock, null);
	}

	/**
	 * As the public constructor, drawing zones from {@code random} (a test's seeded
	 * generator, used from one thread) instead of {@link ThreadLocalRandom}.
	 */
	ClusterAffinity(String serviceId, Supplier<AffinityRules> rules, Supplier<@Nullable CallerZones> callers,
			@Nullable LaneHealth health, BooleanSupplier hashing, AffinityMeters meters, Clock clock,
			@Nullable RandomGenerator random) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.rulesSource = Objects.requireNonNull(rules, "rules");
		this.callers = Objects.requireNonNull(callers, "callers");
		this.health = health;
		this.hashing = Objects.requireNonNull(hashing, "hashing");
		this.meters = Objects.requireNonNull(meters, "meters");
		this.clock = Objects.requireNonNull(clock, "clock");
		this.random = random;
	}

	/**
	 * A filter for the same service under other rules, with the same callers' spread,
	 * outlier detection and meters (a runtime change of the rules).
	 * @param rules the new rules
	 * @return a new filter
	 */
	public ClusterAffinity withRules(AffinityRules rules) {
		ClusterAffinity next = new ClusterAffinity(this.serviceId, constant(Objects.requireNonNull(rules, "rules")),
				this.callers, this.health, this.hashing, this.meters, this.clock, this.random);
		next.rules = rules;
		return next;
	}

	/**
	 * The rules in force; the first call resolves rules given late.
	 * @return the rules
	 * @throws NullPointerException if the late rules' supplier returns {@code null}
	 */
	public AffinityRules rules() {
		AffinityRules resolved = this.rules;
		if (resolved == null) {
			resolved = Objects.requireNonNull(this.rulesSource.get(), "rules");
			this.rules = resolved;
		}
		return resolved;
	}

	/**
	 * The rules in force, if known yet, without resolving rules given late.
	 * @return {@code null} before the first request (or {@link #rules()} call) of rules
	 * given late
	 */
	public @Nullable AffinityRules resolvedRules() {
		return this.rules;
	}

	/**
	 * The service's affinity meters.
	 * @return not {@code null}
	 */
	public AffinityMeters meters() {
		return this.meters;
	}

	/**
	 * What proportional zone routing decided last (for any of the service's lanes), for
	 * the actuator view: {@code active}, and either {@code inactive} (why not) or
	 * {@code shares} (zone to ratio 0..1, the zone of instances without zone metadata
	 * shown as {@code ""}) and {@code localShare}; once the callers' spread is known,
	 * {@code callersWithoutZone} and {@code providersWithoutZone} (counts of instances
	 * without zone metadata, not attributed to any zone).
	 * @return empty before the first proportional decision (or in another mode)
	 */
	public Map<String, Object> zoneRouting() {
		ZoneDecision last = this.lastZones;
		if (last == null) {
			return Map.of();
		}
		Map<String, Object> view = new LinkedHashMap<>();
		Routed routed = last.routed;
		view.put("active", routed != null);
		CallerZones spread = last.callers;
		if (spread != null && last.providersWithoutZone >= 0) {
			view.put("callersWithoutZone", spread.withoutZone());
			view.put("providersWithoutZone", last.providersWithoutZone);
		}
		if (routed == null) {
			view.put("inactive", String.valueOf(last.inactive));
			return view;
		}
		Map<String, Double> shares = new LinkedHashMap<>();
		for (int z = 0; z < routed.shares.zones().size(); z++) {
			shares.put(routed.shares.zones().get(z), routed.shares.share(z));
		}
		view.put("shares", shares);
		view.put("localShare", routed.shares.localShare());
		return view;
	}

	private static Supplier<AffinityRules> constant(AffinityRules rules) {
		return () -> rules;
	}

	/**
	 * The candidates of one request.
	 * @param candidates the candidates
	 * @return a subset of {@code candidates} (or {@code candidates} itself), never
	 * {@code null}; empty only when {@code candidates} is
	 */
	public InstanceSnapshot apply(InstanceSnapshot candidates) {
		AffinityRules rules = rules();
		if (rules.cluster() == null) {
			return candidates;
		}
		Decision decision;
		if (rules.mode() == AffinityMode.PROPORTIONAL && !candidates.isEmpty()) {
			ZoneDecision zones = zoneDecision(candidates, rules);
			Routed routed = zones.routed;
			if (routed != null) {
				int zone = routed.shares.zoneFor(UniformDraws.unit(drawFrom()));
				if (zone != routed.shares.localIndex()) {
					this.meters.crossZone.increment();
				}
				InstanceSnapshot lane = routed.lanes[zone];
				return lane.isEmpty() ? candidates : lane;
			}
			if (zones.threshold == null) {
				return candidates;
			}
			decision = zones.threshold;
		}
		else {
			decision = candidates.derive(this, this.decide);
		}
		if (decision.spilled) {
			spilled(rules, decision);
		}
		return decision.lane;
	}

	private RandomGenerator drawFrom() {
		RandomGenerator seeded = this.random;
		return (seeded != null) ? seeded : ThreadLocalRandom.current();
	}

	private void spilled(AffinityRules rules, Decision decision) {
		this.meters.spillovers.increment();
		long now = this.clock.millis();
		long last = this.lastWarn.get();
		if ((last == Long.MIN_VALUE || now - last >= WARN_INTERVAL_MILLIS) && this.lastWarn.compareAndSet(last, now)) {
			log.warn(
					"Service '{}': cluster '{}' has {} usable of {} registered instances (need at least {} and "
							+ "{} %); spilling over to all clusters",
					this.serviceId, rules.cluster(), decision.usableLocal, decision.registeredLocal,
					minInstances(rules), minHealthyRatio(rules) * 100);
		}
	}

	/**
	 * The candidates of one request: {@link #apply}.
	 * @param candidates the candidates left by the filters before this one
	 * @param request not read
	 * @return as {@link #apply}
	 */
	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		return apply(candidates);
	}

	/**
	 * Runs at {@link CandidateFilter#AFFINITY_ORDER}, after the gray lane is chosen and
	 * outlier ejection.
	 * @return {@value CandidateFilter#AFFINITY_ORDER}
	 */
	@Override
	public int getOrder() {
		return AFFINITY_ORDER;
	}

	private static int minInstances(AffinityRules rules) {
		return (rules.mode() == AffinityMode.STRICT) ? 1 : Math.max(1, rules.minInstances());
	}

	private static double minHealthyRatio(AffinityRules rules) {
		return (rules.mode() == AffinityMode.STRICT) ? 0 : rules.minHealthyRatio();
	}

	private Decision decide(InstanceSnapshot candidates) {
		AffinityRules rules = rules();
		String own = Objects.requireNonNull(rules.cluster(), "cluster");
		int registeredLocal = 0;
		int usableLocal = 0;
		Set<String> seen = new TreeSet<>();
		for (int i = 0; i < candidates.size(); i++) {
			String cluster = candidates.attributes(i).cluster();
			seen.add(String.valueOf(cluster));
			if (own.equals(cluster)) {
				registeredLocal++;
				if (candidates.attributes(i).healthy()) {
					usableLocal++;
				}
			}
		}
		if (candidates.isEmpty()) {
			return new Decision(candidates, false, 0, 0);
		}
		if (registeredLocal == 0) {
			this.warnings.once("no-match",
					(key) -> log.warn("Service '{}': no instance is in the caller's cluster "
							+ "'{}' (clusters seen: {}); check atlas.affinity.cluster and the instances' cluster names",
							this.serviceId, own, seen));
		}
		boolean enough = usableLocal >= minInstances(rules) && usableLocal >= minHealthyRatio(rules) * registeredLocal;
		Decision decision;
		if (enough) {
			InstanceSnapshot local = candidates
				.filter((i) -> own.equals(candidates.attributes(i).cluster()) && candidates.attributes(i).healthy());
			decision = new Decision(local, false, usableLocal, registeredLocal);
		}
		else {
			InstanceSnapshot healthy = candidates.filter((i) -> candidates.attributes(i).healthy());
			decision = new Decision(healthy.isEmpty() ? candidates : healthy, true, usableLocal, registeredLocal);
		}
		if (rules.mode() != AffinityMode.PROPORTIONAL) {
			this.meters.localShare(localWeightShare(decision.lane, own));
		}
		return decision;
	}

	/**
	 * The share of a lane's weight in the own zone: what a balancer over it keeps local.
	 */
	private static double localWeightShare(InstanceSnapshot lane, String own) {
		double local = 0;
		double total = 0;
		for (int i = 0; i < lane.size(); i++) {
			double weight = lane.effectiveWeight(i);
			total += weight;
			if (own.equals(lane.attributes(i).cluster())) {
				local += weight;
			}
		}
		return (total > 0) ? local / total : 0;
	}

	private ZoneDecision zoneDecision(InstanceSnapshot candidates, AffinityRules rules) {
		LaneHealth outliers = this.health;
		Object ejections = (outliers != null) ? outliers.ejectionVersion() : this;
		CallerZones spread = this.callers.get();
		ZoneMemo memo = candidates.derive(this.zoneKey, this.zoneMemos);
		ZoneDecision decision = memo.decision;
		if (decision == null || decision.ejections != ejections || decision.callers != spread) {
			decision = decideZones(candidates, rules, ejections, spread);
			memo.decision = decision;
			report(rules, candidates, decision);
		}
		return decision;
	}

	private ZoneDecision decideZones(InstanceSnapshot candidates, AffinityRules rules, Object ejections,
			@Nullable CallerZones spread) {
		String own = Objects.requireNonNull(rules.cluster(), "cluster");
		LaneHealth outliers = this.health;
		InstanceSnapshot lane = candidates;
		if (outliers != null) {
			InstanceSnapshot before = outliers.laneBefore(candidates);
			if (before != null) {
				lane = before;
			}
			else if (outliers.panics(candidates)) {
				// the ejection filter kept this lane whole: its panic threshold
				return new ZoneDecision(ejections, spread, null, null, PANIC, -1, localWeightShare(candidates, own));
			}
		}
		if (this.hashing.getAsBoolean()) {
			return off(candidates, ejections, spread, HASHING, -1);
		}
		if (spread == null) {
			return off(candidates, ejections, spread, ZoneShares.Inactive.NO_CALLER_DISTRIBUTION.description(), -1);
		}
		Map<String, double[]> byZone = new LinkedHashMap<>();
		int withoutZone = 0;
		for (int i = 0; i < lane.size(); i++) {
			String zone = zoneOf(lane, i);
			if (zone == NO_ZONE) {
				withoutZone++;
			}
			double weight = lane.attributes(i).weight();
			boolean healthy = lane.attributes(i).healthy() && (outliers == null || !outliers.isEjected(lane.key(i)));
			double[] totals = byZone.computeIfAbsent(zone, (z) -> new double[3]);
			totals[0] += weight;
			totals[1] += healthy ? weight : 0;
			totals[2] += (weight > 0) ? 1 : 0;
		}
		if (withoutZone > 0) {
			int count = withoutZone;
			this.warnings.once("providers-without-zone", (key) -> log.warn("Service '{}': {} instance(s) have no zone "
					+ "metadata; proportional zone routing counts them as a zone of their own that no caller is in",
					this.serviceId, count));
		}
		for (String zone : spread.perZone().keySet()) {
			byZone.computeIfAbsent(zone, (z) -> new double[3]);
		}
		List<ZoneShares.Zone> zones = new ArrayList<>(byZone.size());
		ZoneShares shares;
		try {
			byZone.forEach((zone, totals) -> zones
				.add(new ZoneShares.Zone(zone, spread.callers(zone), totals[0], totals[1], (int) totals[2])));
			shares = ZoneShares.compute(own, zones, rules.minClusterSize());
		}
		catch (IllegalArgumentException ex) {
			// e.g. weights whose sum is not finite: never fail a request for it
			this.warnings.once("invalid-zones",
					(key) -> log.warn(
							"Service '{}': proportional zone routing cannot "
									+ "use these instances ({}); the threshold rules apply",
							this.serviceId, ex.getMessage()));
			return off(candidates, ejections, spread, "the providers' weights cannot be summed", withoutZone);
		}
		ZoneShares.Inactive inactive = shares.inactive();
		if (inactive != null) {
			return off(candidates, ejections, spread, inactive.description(), withoutZone);
		}
		InstanceSnapshot[] lanes = new InstanceSnapshot[zones.size()];
		for (int z = 0; z < lanes.length; z++) {
			String zone = zones.get(z).zone();
			lanes[z] = candidates
				.filter((i) -> zone.equals(zoneOf(candidates, i)) && candidates.attributes(i).healthy());
		}
		return new ZoneDecision(ejections, spread, new Routed(shares, lanes), null, null, withoutZone,
				shares.localShare());
	}

	/** Zone routing off for a reason: the threshold rules' decision. */
	private ZoneDecision off(InstanceSnapshot candidates, Object ejections, @Nullable CallerZones spread, String why,
			int withoutZone) {
		Decision threshold = decide(candidates);
		return new ZoneDecision(ejections, spread, null, threshold, why, withoutZone,
				localWeightShare(threshold.lane, Objects.requireNonNull(rules().cluster(), "cluster")));
	}

	private static String zoneOf(InstanceSnapshot snapshot, int index) {
		String zone = snapshot.attributes(index).cluster();
		return (zone != null) ? zone : NO_ZONE;
	}

	/**
	 * Keeps the lane's decision for the view and the gauge, and logs once per change of a
	 * lane's state whether proportional zone routing is on, and why not. A lane is named
	 * by the tag of its first candidate (the gray lanes of a service differ by tag); the
	 * view and the gauge follow the largest lane.
	 */
	private void report(AffinityRules rules, InstanceSnapshot candidates, ZoneDecision decision) {
		String lane = String.valueOf(candidates.attributes(0).tag());
		if (this.lanes.size() >= MAX_LANES && !this.lanes.containsKey(lane)) {
			this.lanes.clear();
		}
		LaneState previous = this.lanes.put(lane, new LaneState(decision, candidates.size()));
		LaneState largest = null;
		for (LaneState state : this.lanes.values()) {
			if (largest == null || state.size > largest.size) {
				largest = state;
			}
		}
		if (largest != null) {
			this.lastZones = largest.decision;
			this.meters.localShare(largest.decision.localShare);
		}
		Routed routed = decision.routed;
		Object state = state(decision);
		Object before = (previous != null) ? state(previous.decision) : null;
		if (Objects.equals(before, state)) {
			return;
		}
		String named = (candidates.attributes(0).tag() != null) ? " (lane '" + lane + "')" : "";
		if (routed != null) {
			log.info("Service '{}'{}: proportional zone routing is on: {} (local zone '{}')", this.serviceId, named,
					routed.shares, rules.cluster());
		}
		else {
			log.info("Service '{}'{}: proportional zone routing is off: {}; {}", this.serviceId, named,
					decision.inactive,
					(decision.threshold != null) ? "the threshold rules apply" : "every zone is used");
		}
	}

	/** On, or why not: what a change of is logged. */
	private static @Nullable Object state(ZoneDecision decision) {
		return (decision.routed != null) ? Boolean.TRUE : decision.inactive;
	}

	private record Decision(InstanceSnapshot lane, boolean spilled, int usableLocal, int registeredLocal) {
	}

	/**
	 * A proportional decision: the shares and each zone's usable candidates when zone
	 * routing is on; else the threshold decision ({@code null}: every candidate) and why.
	 */
	private record ZoneDecision(Object ejections, @Nullable CallerZones callers, @Nullable Routed routed,
			@Nullable Decision threshold, @Nullable String inactive, int providersWithoutZone, double localShare) {
	}

	/** A lane's last decision and how many candidates it had. */
	private record LaneState(ZoneDecision decision, int size) {
	}

	/** Zone routing on: the shares, and each zone's usable candidates by zone index. */
	private record Routed(ZoneShares shares, InstanceSnapshot[] lanes) {
	}

	/**
	 * The proportional decision for one candidate set, replaced when its inputs change.
	 */
	private static final class ZoneMemo {

		volatile @Nullable ZoneDecision decision;

	}

}
