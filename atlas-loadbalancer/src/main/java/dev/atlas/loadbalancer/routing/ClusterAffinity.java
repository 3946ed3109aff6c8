package dev.atlas.loadbalancer.routing;

import java.time.Clock;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.Ordered;

/**
 * Cluster affinity (locality): prefers the instances of the caller's own cluster or zone
 * and spills over to every cluster when the own cluster is thin.
 *
 * <ul>
 * <li>The caller has no cluster: every instance, no spill-over is counted or logged.</li>
 * <li>Usable instances are those not marked unhealthy (e.g. {@code nacos.healthy=false});
 * an instance without cluster metadata belongs to no cluster, so never to the
 * caller's.</li>
 * <li>The own cluster has at least {@code min-instances} usable instances and at least
 * {@code min-healthy-ratio} of its registered ones are usable: its usable instances
 * only.</li>
 * <li>Otherwise (spill-over): every usable instance of every cluster (every instance when
 * none is usable), counted per request in {@code atlas.affinity.spillover{service}}, with
 * at most one WARN per minute naming the cluster; when no instance at all carries the
 * caller's cluster, one WARN lists the clusters that were seen (the classic
 * {@code DEFAULT} vs {@code bj-zone-a} typo).</li>
 * </ul>
 *
 * <p>
 * The rules may be given late
 * ({@link #ClusterAffinity(String, Supplier, MeterRegistry, Clock)}): they are then asked
 * for once, at the first request, so that a caller's cluster set up by a registry
 * integration while the application starts (Spring Cloud's
 * {@code LoadBalancerZoneConfig}) is seen.
 *
 * <p>
 * Computed once per input snapshot and memoized on it. Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class ClusterAffinity implements CandidateFilter, Ordered {

	/**
	 * Counter of requests that spilled over out of the caller's cluster; tags
	 * {@code service}.
	 */
	public static final String SPILLOVER_METER = "atlas.affinity.spillover";

	/** Minimum interval between two spill-over WARNs of one service. */
	static final long WARN_INTERVAL_MILLIS = 60_000;

	private static final Logger log = LoggerFactory.getLogger(ClusterAffinity.class);

	private final String serviceId;

	private final Supplier<AffinityRules> rulesSource;

	// Written once, at the first request; a racing second thread resolves the same
	// rules again (the source memoizes), never different ones.
	private volatile @Nullable AffinityRules rules;

	private final Clock clock;

	private final Counter spillovers;

	private final AtomicLong lastWarn = new AtomicLong(Long.MIN_VALUE);

	private final OncePerKeyLog warnings = new OncePerKeyLog();

	// Built once: a method reference written at the call site would be a new object on
	// every request.
	private final Function<InstanceSnapshot, Decision> decide = this::decide;

	/**
	 * Creates the affinity of one service.
	 * @param serviceId the service
	 * @param rules the rules
	 * @param meterRegistry where {@value #SPILLOVER_METER} is registered; not
	 * {@code null}
	 * @param clock rate-limits the spill-over WARN
	 */
	public ClusterAffinity(String serviceId, AffinityRules rules, MeterRegistry meterRegistry, Clock clock) {
		this(serviceId, constant(Objects.requireNonNull(rules, "rules")), meterRegistry, clock);
		this.rules = rules;
	}

	/**
	 * Creates the affinity of one service whose rules are known only at the first
	 * request.
	 * @param serviceId the service
	 * @param rules asked once, at the first request (or the first {@link #rules()} call),
	 * from whichever thread makes it; must not return {@code null}; should return the
	 * same rules when asked twice (two threads may race on the first request)
	 * @param meterRegistry where {@value #SPILLOVER_METER} is registered; not
	 * {@code null}
	 * @param clock rate-limits the spill-over WARN
	 */
	public ClusterAffinity(String serviceId, Supplier<AffinityRules> rules, MeterRegistry meterRegistry, Clock clock) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.rulesSource = Objects.requireNonNull(rules, "rules");
		this.clock = Objects.requireNonNull(clock, "clock");
		this.spillovers = Counter.builder(SPILLOVER_METER)
			.description("Requests sent outside the caller's cluster because it had too few usable instances")
			.tag("service", serviceId)
			.register(meterRegistry);
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
		Decision decision = candidates.derive(this, this.decide);
		if (decision.spilled) {
			this.spillovers.increment();
			long now = this.clock.millis();
			long last = this.lastWarn.get();
			if ((last == Long.MIN_VALUE || now - last >= WARN_INTERVAL_MILLIS)
					&& this.lastWarn.compareAndSet(last, now)) {
				log.warn(
						"Service '{}': cluster '{}' has {} usable of {} registered instances (need at least {} and "
								+ "{} %); spilling over to all clusters",
						this.serviceId, rules.cluster(), decision.usableLocal, decision.registeredLocal,
						rules.minInstances(), rules.minHealthyRatio() * 100);
			}
		}
		return decision.lane;
	}

	/**
	 * The candidates of one request: {@link #apply}; affinity does not depend on the
	 * request.
	 * @param candidates the candidates left by the filters before this one
	 * @param request not read
	 * @return as {@link #apply}
	 */
	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		return apply(candidates);
	}

	/**
	 * Runs at {@link CandidateFilter#AFFINITY_ORDER}, after the gray lane is chosen.
	 * @return {@value CandidateFilter#AFFINITY_ORDER}
	 */
	@Override
	public int getOrder() {
		return AFFINITY_ORDER;
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
		boolean enough = usableLocal >= Math.max(1, rules.minInstances())
				&& usableLocal >= rules.minHealthyRatio() * registeredLocal;
		if (enough) {
			InstanceSnapshot local = candidates
				.filter((i) -> own.equals(candidates.attributes(i).cluster()) && candidates.attributes(i).healthy());
			return new Decision(local, false, usableLocal, registeredLocal);
		}
		InstanceSnapshot healthy = candidates.filter((i) -> candidates.attributes(i).healthy());
		return new Decision(healthy.isEmpty() ? candidates : healthy, true, usableLocal, registeredLocal);
	}

	private record Decision(InstanceSnapshot lane, boolean spilled, int usableLocal, int registeredLocal) {
	}

}
