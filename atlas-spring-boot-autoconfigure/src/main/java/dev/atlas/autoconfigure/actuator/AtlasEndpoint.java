package dev.atlas.autoconfigure.actuator;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import dev.atlas.autoconfigure.affinity.AffinityStep;
import dev.atlas.autoconfigure.lifecycle.GracefulShutdown;
import dev.atlas.autoconfigure.lifecycle.LosslessRegistration;
import dev.atlas.autoconfigure.lifecycle.RegistrationMetadata;
import dev.atlas.autoconfigure.lifecycle.RegistrationStatus;
import dev.atlas.autoconfigure.loadbalancer.ServiceRouting;
import dev.atlas.loadbalancer.instance.InstanceAttributes;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.orca.LoadReportLifecycle;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.weighting.SlowStart;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

/**
 * {@code GET /actuator/atlas}: what Atlas decided, per service this application calls,
 * and this application's own lifecycle state; {@code GET /actuator/atlas/{serviceId}} for
 * one service (404 when the application has not called it). The shape is documented in
 * the README and fixed by tests:
 *
 * <pre>
 * {
 *   "services": {
 *     "user-service": {
 *       "strategy": "weighted-random", "stale": false,
 *       "instances": [ { "instanceId": "…", "host": "127.0.0.1", "port": 8081, "tag": "v1", "cluster": "a",
 *                        "weight": 2.0, "effectiveWeight": 1.0, "warmup": 0.5, "picks": 120, "inFlight": 1,
 *                        "outlier": { "ejected": false, "ejectedAt": null, "ejectedUntil": null, "timesEjected": 0,
 *                                     "consecutive5xx": 0, "consecutiveGatewayFailures": 0 } } ],
 *       "retryBudget": { "enabled": true, "balance": 112.4, "requests": 62, "retries": 0, "exhausted": 0 },
 *       "saturated": 0,
 *       "zoneRouting": { "active": true, "callersWithoutZone": 0, "providersWithoutZone": 0,
 *                        "shares": { "a": 0.667, "b": 0.333 }, "localShare": 0.667 },
 *       "rules": { "strategy": "weighted-random", "all-zero-weights": "fail-open", "max-in-flight-per-instance": 0,
 *                  "gray-enabled": true,
 *                  "gray": { "header": "X-Service-Version", "canary-percentages": { "v2": 10.0 }, … },
 *                  "warmup": { … }, "outlier": { … }, "least-request": { … }, "peak-ewma": { … }, "hash": { … },
 *                  "affinity": { "cluster": "a", "mode": "proportional", "min-healthy-ratio": 0.1,
 *                                "min-instances": 1, "min-cluster-size": 6 },
 *                  "retry": { "enabled": true, "ratio": 0.2, "min-retries-per-second": 10, "window": "10s" } },
 *       "rulesChangedAt": 1767000100000
 *     }
 *   },
 *   "lifecycle": { "registered": true, "registration": "LISTED", "registeredAt": 1767000000000,
 *                  "listedAt": 1767000000400, "ready": true, "state": "SERVING" }
 * }
 * </pre> {@code registered} is true only while the registry lists this instance (as this
 * application's discovery client sees it) and the shutdown sequence has not begun;
 * {@code registration} says where it is ({@code NOT_REGISTERED}, {@code PENDING}: the
 * registry accepted it but does not list it yet, {@code LISTED}, {@code DEREGISTERED});
 * {@code registeredAt} is the {@code atlas.registered-at} of the registration the
 * registry accepted and {@code listedAt} when it was first listed (epoch ms, or
 * {@code null}). {@code warmup} is the warmup factor applied to the weight (1 when warm),
 * as warmup reports it; {@code effectiveWeight} is the weight after every weight
 * adjuster; {@code picks} counts this caller's requests sent to the instance (each
 * attempt) and {@code inFlight} those not completed yet, both from Spring Cloud
 * LoadBalancer's request lifecycle. {@code outlier} is what outlier detection knows:
 * whether the instance is ejected now, since when and until when (epoch ms: it returns at
 * the first probe that passes from then on; {@code null} when not ejected), the
 * multiplier of its next or current ejection time ({@code timesEjected}), and its
 * failures in a row. {@code retryBudget} is the state of the service's retry budget over
 * its window: the retries it allows now ({@code balance}; {@code null} when it is off),
 * the requests and retries it counted, and the retries it refused so far
 * ({@code exhausted}); {@code null} for a service Atlas does not route. {@code saturated}
 * counts the requests that got no instance because every candidate had
 * {@code max-in-flight-per-instance} requests in flight ({@code null} for a service Atlas
 * does not route). {@code zoneRouting} is what proportional cluster affinity decided last
 * ({@code null} in another mode or before its first decision): {@code active}, why not
 * ({@code inactive}), or each zone's share of this caller's requests. {@code rules} are
 * the rules in force for the service (each rules record's components, durations as in
 * properties; {@code affinity} is {@code null} until the first request resolves the
 * caller's cluster) and {@code rulesChangedAt} when they last changed at runtime (epoch
 * ms; {@code null}: as at startup).
 *
 * @since 0.1.0
 */
@Endpoint(id = "atlas")
public class AtlasEndpoint {

	private final LoadBalancerClientFactory clients;

	private final ObjectProvider<RegistrationMetadata> registration;

	private final ObjectProvider<RegistrationStatus> status;

	private final ObjectProvider<LosslessRegistration> lossless;

	private final ObjectProvider<GracefulShutdown> shutdown;

	/**
	 * Creates the endpoint.
	 * @param clients the load-balancer contexts of Spring Cloud
	 * @param registration registration metadata, if lifecycle support is on
	 * @param status whether the registry lists this application, if lifecycle support is
	 * on
	 * @param lossless register-when-ready, if on
	 * @param shutdown the shutdown sequence, if on
	 */
	public AtlasEndpoint(LoadBalancerClientFactory clients, ObjectProvider<RegistrationMetadata> registration,
			ObjectProvider<RegistrationStatus> status, ObjectProvider<LosslessRegistration> lossless,
			ObjectProvider<GracefulShutdown> shutdown) {
		this.clients = clients;
		this.registration = registration;
		this.status = status;
		this.lossless = lossless;
		this.shutdown = shutdown;
	}

	/**
	 * Every service this application called, and its own lifecycle.
	 * @return the view
	 */
	@ReadOperation
	public Map<String, Object> atlas() {
		Map<String, Object> services = new LinkedHashMap<>();
		for (String serviceId : new TreeSet<>(this.clients.getContextNames())) {
			services.put(serviceId, service(serviceId));
		}
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("services", services);
		view.put("lifecycle", lifecycle());
		return view;
	}

	private static Map<String, Object> outlier(OutlierDetector.@Nullable InstanceHealth health) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("ejected", health != null && health.ejected());
		view.put("ejectedAt", (health != null && health.ejected()) ? health.ejectedAt() : null);
		view.put("ejectedUntil", (health != null && health.ejected()) ? health.ejectedUntil() : null);
		view.put("timesEjected", (health != null) ? health.timesEjected() : 0);
		view.put("consecutive5xx", (health != null) ? health.consecutive5xx() : 0);
		view.put("consecutiveGatewayFailures", (health != null) ? health.consecutiveGatewayFailures() : 0);
		return view;
	}

	/**
	 * One service.
	 * @param serviceId the service id
	 * @return the view, or {@code null} (404) when this application never called the
	 * service
	 */
	@ReadOperation
	public @Nullable Map<String, Object> service(@Selector String serviceId) {
		if (!this.clients.getContextNames().contains(serviceId)) {
			return null;
		}
		Map<String, Object> view = new LinkedHashMap<>();
		ReactiveLoadBalancer<ServiceInstance> balancer = this.clients.getInstance(serviceId);
		AtlasLoadBalancer atlas = (balancer instanceof AtlasLoadBalancer a) ? a : null;
		view.put("strategy", (atlas != null) ? atlas.strategyName()
				: (balancer != null) ? balancer.getClass().getSimpleName() : null);
		ServiceInstanceListSupplier supplier = this.clients.getInstance(serviceId, ServiceInstanceListSupplier.class);
		AtlasServiceInstanceListSupplier stage = AtlasServiceInstanceListSupplier.find(supplier);
		view.put("stale", stage != null && stage.isStale());
		InstanceStats stats = (atlas != null) ? this.clients.getInstance(serviceId, InstanceStats.class) : null;
		ServiceRouting routing = (atlas != null) ? this.clients.getInstance(serviceId, ServiceRouting.class) : null;
		SlowStart slowStart = (routing != null) ? routing.slowStart()
				: this.clients.getInstance(serviceId, SlowStart.class);
		OutlierDetector outliers = (atlas != null) ? this.clients.getInstance(serviceId, OutlierDetector.class) : null;
		LoadReportLifecycle reports = (atlas != null) ? this.clients.getInstance(serviceId, LoadReportLifecycle.class)
				: null;
		List<Map<String, Object>> instances = new ArrayList<>();
		InstanceSnapshot snapshot = (stage != null) ? stage.lastSeen() : InstanceSnapshot.EMPTY;
		for (int i = 0; i < snapshot.size(); i++) {
			ServiceInstance instance = snapshot.get(i);
			InstanceAttributes attributes = snapshot.attributes(i);
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("instanceId", instance.getInstanceId());
			row.put("host", instance.getHost());
			row.put("port", instance.getPort());
			row.put("tag", attributes.tag());
			row.put("cluster", attributes.cluster());
			row.put("weight", attributes.weight());
			row.put("effectiveWeight", snapshot.effectiveWeight(i));
			row.put("warmup", (slowStart != null) ? slowStart.factor(instance) : 1.0);
			row.put("picks", (stats != null) ? stats.requests(instance) : 0);
			row.put("inFlight", (stats != null) ? stats.inFlight(instance) : 0);
			row.put("latencyMs", millis((stats != null) ? stats.latencyMillis(instance) : Double.NaN));
			row.put("peakEwmaMs", millis((stats != null) ? stats.peakEwmaMillis(instance) : Double.NaN));
			row.put("failureRate", (stats != null) ? Math.round(stats.failureRate(instance) * 1000) / 1000.0 : 0.0);
			row.put("outlier", outlier((outliers != null) ? outliers.health(instance) : null));
			double reported = (reports != null) ? reports.load().weight(snapshot.key(i)) : 0;
			row.put("reportedWeight", (reported > 0) ? Math.round(reported * 1000) / 1000.0 : null);
			instances.add(row);
		}
		view.put("instances", instances);
		RetryBudget budget = (atlas != null) ? this.clients.getInstance(serviceId, RetryBudget.class) : null;
		view.put("retryBudget", (budget != null) ? retryBudget(budget) : null);
		InFlightLimit limit = (atlas != null) ? this.clients.getInstance(serviceId, InFlightLimit.class) : null;
		view.put("saturated", (limit != null) ? limit.saturatedCount() : null);
		AffinityStep affinity = (atlas != null) ? this.clients.getInstance(serviceId, AffinityStep.class) : null;
		Map<String, Object> zoneRouting = (affinity != null) ? affinity.zoneRouting() : Map.of();
		view.put("zoneRouting", zoneRouting.isEmpty() ? null : zoneRouting);
		Instant changedAt = (routing != null) ? routing.changedAt() : null;
		view.put("rules", (routing != null) ? routing.rulesView() : null);
		view.put("rulesChangedAt", (changedAt != null) ? changedAt.toEpochMilli() : null);
		return view;
	}

	/** The state of a retry budget: its window's counts and the retries it allows now. */
	private static Map<String, Object> retryBudget(RetryBudget budget) {
		Map<String, Object> view = new LinkedHashMap<>();
		double balance = budget.balance();
		view.put("enabled", budget.rules().enabled());
		view.put("balance", Double.isInfinite(balance) ? null : Math.floor(balance * 10) / 10);
		view.put("requests", budget.requests());
		view.put("retries", budget.retries());
		view.put("exhausted", budget.exhausted());
		return view;
	}

	/** A latency in ms rounded to 0.1 ms, or {@code null} when unknown. */
	private static @Nullable Double millis(double value) {
		return Double.isNaN(value) ? null : Math.round(value * 10) / 10.0;
	}

	private Map<String, Object> lifecycle() {
		Map<String, Object> view = new LinkedHashMap<>();
		RegistrationMetadata metadata = this.registration.getIfAvailable();
		long registeredAt = (metadata != null) ? metadata.registeredAt() : -1;
		GracefulShutdown sequence = this.shutdown.getIfAvailable();
		GracefulShutdown.State state = (sequence != null) ? sequence.state() : GracefulShutdown.State.SERVING;
		RegistrationStatus status = this.status.getIfAvailable();
		RegistrationStatus.Phase phase = (status != null) ? status.phase() : RegistrationStatus.Phase.NOT_REGISTERED;
		long listedAt = (status != null) ? status.listedAt() : -1;
		view.put("registered", phase == RegistrationStatus.Phase.LISTED && state == GracefulShutdown.State.SERVING);
		view.put("registration", phase.name());
		view.put("registeredAt", (registeredAt >= 0) ? registeredAt : null);
		view.put("listedAt", (listedAt >= 0) ? listedAt : null);
		LosslessRegistration registration = this.lossless.getIfAvailable();
		view.put("ready", registration == null || registration.isReady());
		view.put("state", state.name());
		return view;
	}

}
