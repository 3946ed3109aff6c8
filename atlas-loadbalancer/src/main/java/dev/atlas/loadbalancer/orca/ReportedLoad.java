package dev.atlas.loadbalancer.orca;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.spi.ReportedWeights;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import dev.atlas.loadbalancer.support.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The weights of one service's instances from the load they report, as gRFC A58
 * ({@code weighted_round_robin}) computes them: each valid report sets the instance's
 * weight to {@code qps ÷ (utilization + eps ÷ qps × error penalty)} (utilization: the
 * application's when reported, else the CPU's; a report without requests or without
 * utilization is ignored); a weight is used only once its instance has reported for the
 * blackout period without a gap longer than the expiration period, and is dropped when
 * the last report is older than the expiration period (then the blackout starts over).
 *
 * <p>
 * Reports arrive on the response path ({@link #record}); the weights the strategy reads
 * ({@link #weight}) are recomputed at most once per update period, on the
 * {@link Scheduler} (off the request path), when responses keep coming, and the listeners
 * are then told. State is per instance that reported within the expiration period, so it
 * follows the live instances: one that stops reporting is forgotten after it.
 *
 * <p>
 * Thread-safe: a report takes its instance's monitor (never a pick), a recomputation this
 * object's (one at a time); reads are a hash lookup in an immutable map.
 *
 * @since 0.1.0
 */
public final class ReportedLoad implements ReportedWeights {

	private static final Logger log = LoggerFactory.getLogger(ReportedLoad.class);

	/** Headers that could not be read, by service and instance: logged once each. */
	private static final OncePerKeyLog MALFORMED = new OncePerKeyLog();

	private final Supplier<WeightRules> rules;

	/** The rules as of the last recomputation. */
	private volatile WeightRules current;

	private final Scheduler scheduler;

	private final LongSupplier ticker;

	private final ConcurrentHashMap<InstanceKey, Endpoint> endpoints = new ConcurrentHashMap<>();

	private final AtomicLong nextUpdateNanos;

	private final CopyOnWriteArrayList<BooleanSupplier> listeners = new CopyOnWriteArrayList<>();

	private final Runnable update = this::update;

	private volatile Map<InstanceKey, Double> weights = Map.of();

	/**
	 * Creates the weights of one service with fixed rules.
	 * @param rules blackout, expiration, update period and error penalty
	 * @param scheduler runs the recomputations
	 * @param ticker the clock, ns ({@link System#nanoTime} in production)
	 */
	public ReportedLoad(WeightRules rules, Scheduler scheduler, LongSupplier ticker) {
		this(() -> rules, scheduler, ticker);
	}

	/**
	 * Creates the weights of one service with rules that may change at runtime.
	 * @param rules the rules in force, read once per recomputation (so a change applies
	 * from the next one); must not return {@code null}
	 * @param scheduler runs the recomputations
	 * @param ticker the clock, ns ({@link System#nanoTime} in production)
	 */
	public ReportedLoad(Supplier<WeightRules> rules, Scheduler scheduler, LongSupplier ticker) {
		this.rules = Objects.requireNonNull(rules, "rules");
		this.current = Objects.requireNonNull(rules.get(), "rules");
		this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
		this.ticker = Objects.requireNonNull(ticker, "ticker");
		this.nextUpdateNanos = new AtomicLong(ticker.getAsLong());
	}

	/**
	 * Takes one report of an instance (gRFC A58's {@code UpdateWeight}) and starts a
	 * recomputation when one is due.
	 * @param instance the instance that answered
	 * @param report its report
	 */
	public void record(InstanceKey instance, LoadReport report) {
		long now = this.ticker.getAsLong();
		double qps = report.rps();
		double utilization = report.utilization();
		if (qps > 0 && utilization > 0) {
			double penalty = (report.eps() > 0) ? report.eps() / qps * this.current.errorUtilizationPenalty() : 0;
			double weight = qps / (utilization + penalty);
			if (weight > 0 && !Double.isInfinite(weight)) {
				this.endpoints.computeIfAbsent(instance, (key) -> new Endpoint()).update(weight, now);
			}
		}
		updateIfDue(now);
	}

	/**
	 * Takes the {@value LoadReport#HEADER} header of one answer, as a caller's request
	 * lifecycle or a gateway reads it: a report that {@link LoadReport#parse} reads is
	 * {@link #record recorded}; an answer without the header counts as
	 * {@link #answered()}, and so does one whose header cannot be read, which is also
	 * logged (WARN) once per service and instance. Never throws for a header's content.
	 * @param serviceId the service, for the message
	 * @param instance the instance that answered
	 * @param header the header's value; {@code null} when the answer has none
	 */
	public void recordHeader(String serviceId, InstanceKey instance, @Nullable String header) {
		LoadReport report = (header != null) ? LoadReport.parse(header) : null;
		if (report != null) {
			record(instance, report);
			return;
		}
		if (header != null) {
			String address = instance.address();
			MALFORMED.once(serviceId + ' ' + address,
					(key) -> log.warn(
							"Service '{}', instance {}: cannot read its {} header '{}'; the report is ignored "
									+ "(accepted: TEXT name=value pairs or JSON)",
							serviceId, address, LoadReport.HEADER, header));
		}
		answered();
	}

	/**
	 * A response without a report: starts a recomputation when one is due, so that
	 * weights expire while responses keep coming without reports.
	 */
	public void answered() {
		updateIfDue(this.ticker.getAsLong());
	}

	private void updateIfDue(long now) {
		long next = this.nextUpdateNanos.get();
		if (now - next >= 0
				&& this.nextUpdateNanos.compareAndSet(next, now + this.current.weightUpdatePeriod().toNanos())) {
			this.scheduler.schedule(this.update, 0);
		}
	}

	/**
	 * Recomputes every weight (gRFC A58's {@code GetWeight} for each instance), forgets
	 * the instances whose last report has expired, and tells the listeners. Runs on the
	 * scheduler; tests call it directly.
	 */
	public synchronized void update() {
		long now = this.ticker.getAsLong();
		WeightRules rules = Objects.requireNonNull(this.rules.get(), "rules");
		this.current = rules;
		long blackout = rules.blackoutPeriod().toNanos();
		long expiration = rules.weightExpirationPeriod().toNanos();
		Map<InstanceKey, Double> computed = new HashMap<>();
		this.endpoints.forEach((key, endpoint) -> {
			double weight = endpoint.weight(now, blackout, expiration);
			if (weight > 0) {
				computed.put(key, weight);
			}
			else {
				// atomically with a report arriving now: it keeps the instance
				this.endpoints.computeIfPresent(key,
						(k, present) -> (present == endpoint && endpoint.expired(now, expiration)) ? null : present);
			}
		});
		this.weights = Map.copyOf(computed);
		this.listeners.removeIf((listener) -> {
			try {
				return !listener.getAsBoolean();
			}
			catch (RuntimeException ex) {
				log.warn("A listener of reported weights failed; it is dropped", ex);
				return true;
			}
		});
	}

	@Override
	public double weight(InstanceKey instance) {
		Double weight = this.weights.get(instance);
		return (weight != null) ? weight : 0;
	}

	@Override
	public void subscribe(BooleanSupplier listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	/**
	 * Instances whose reports are remembered (tests, the actuator view).
	 * @return {@code >= 0}
	 */
	public int trackedInstances() {
		return this.endpoints.size();
	}

	/**
	 * The weights in force, by instance (the actuator view).
	 * @return an immutable map; instances without a weight in force are absent
	 */
	public Map<InstanceKey, Double> weights() {
		return this.weights;
	}

	/** One instance's state, as gRFC A58 keeps it. */
	private static final class Endpoint {

		/** gRFC A58's "infinite past": no report since the last expiration. */
		private static final long NEVER = Long.MIN_VALUE;

		private double weight;

		private long lastUpdated = NEVER;

		private long nonEmptySince = NEVER;

		synchronized void update(double weight, long now) {
			if (this.nonEmptySince == NEVER) {
				this.nonEmptySince = now;
			}
			this.lastUpdated = now;
			this.weight = weight;
		}

		synchronized double weight(long now, long blackout, long expiration) {
			if (this.lastUpdated == NEVER || now - this.lastUpdated >= expiration) {
				this.nonEmptySince = NEVER;
				return 0;
			}
			if (blackout > 0 && now - this.nonEmptySince < blackout) {
				return 0;
			}
			return this.weight;
		}

		synchronized boolean expired(long now, long expiration) {
			return this.lastUpdated == NEVER || now - this.lastUpdated >= expiration;
		}

	}

}
