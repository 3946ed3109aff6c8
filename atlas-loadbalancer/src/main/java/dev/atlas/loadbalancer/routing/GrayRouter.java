package dev.atlas.loadbalancer.routing;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import dev.atlas.loadbalancer.support.UniformDraws;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.Ordered;

/**
 * Chooses the lane of a request: the subset of a service's instances it may be sent to,
 * by the tag it wants (from its header, the propagated context or the caller's own tag)
 * and {@link GrayRules}.
 *
 * <table>
 * <caption>Lanes</caption>
 * <tr>
 * <th>request wants</th>
 * <th>instances</th>
 * </tr>
 * <tr>
 * <td>tag T, some instance tagged T</td>
 * <td>those tagged T</td>
 * </tr>
 * <tr>
 * <td>a baseline tag, no instance tagged with it</td>
 * <td>baseline</td>
 * </tr>
 * <tr>
 * <td>tag T, no instance tagged T</td>
 * <td>{@link GrayFallback}: baseline, all or none (counted in
 * {@code atlas.gray.fallback}, one WARN per tag)</td>
 * </tr>
 * <tr>
 * <td>no tag, a percentage rule picks tag C with instances</td>
 * <td>those tagged C (every percentage choice is counted by the lane it picked:
 * {@link CanaryMeters})</td>
 * </tr>
 * <tr>
 * <td>no tag, baseline isolated</td>
 * <td>baseline (untagged or a baseline tag); all when there is none</td>
 * </tr>
 * <tr>
 * <td>no tag, baseline not isolated</td>
 * <td>all</td>
 * </tr>
 * </table>
 *
 * <p>
 * The lanes of a snapshot are computed once and memoized on it, so routing a request is a
 * few map lookups; the lane returned for the same snapshot and tag is always the same
 * object, which lets the balancer memoize its tables per lane. Thread-safe and lock-free.
 *
 * @since 0.1.0
 */
public final class GrayRouter implements CandidateFilter, Ordered {

	/**
	 * Counter of requests whose wanted tag had no instance; tags {@code service},
	 * {@code policy}.
	 */
	public static final String FALLBACK_METER = "atlas.gray.fallback";

	private static final Logger log = LoggerFactory.getLogger(GrayRouter.class);

	private final String serviceId;

	private final GrayRules rules;

	private final LaneRule[] laneRules;

	private final String[] canaryTags;

	private final double[] canaryCumulative;

	private final Counter fallbacks;

	private final CanaryMeters canaryMeters;

	/**
	 * The requests each percentage choice sent to a canary lane, in {@link #canaryTags}
	 * order, then those it left on the baseline; empty without percentage rules, its
	 * elements {@code null} (nothing counted) until {@link #putInForce()}.
	 */
	private final @Nullable Counter[] canaryDraws;

	private final OncePerKeyLog warnings = new OncePerKeyLog();

	// Header names as looked up, lower-cased once: Spring's HttpHeaders and
	// RoutingContext
	// lower-case the name of every lookup, which allocates unless it already is lower
	// case.
	private final String tagHeaderKey;

	private final @Nullable String hashKeyHeaderKey;

	// Built once: a method reference written at the call site would be a new object on
	// every request.
	private final Function<InstanceSnapshot, Lanes> lanes = Lanes::new;

	/**
	 * Creates the router of one service, in force at once, with canary meters of its own
	 * (registered in {@code meterRegistry}, removed by {@code canaryMeters().close()}):
	 * for a router used alone. A router that later versions replace at runtime shares the
	 * service's {@link CanaryMeters} instead
	 * ({@link #GrayRouter(String, GrayRules, MeterRegistry, CanaryMeters)}).
	 * @param serviceId the service
	 * @param rules the rules
	 * @param meterRegistry where {@value #FALLBACK_METER} and the {@link CanaryMeters}
	 * are registered
	 */
	public GrayRouter(String serviceId, GrayRules rules, MeterRegistry meterRegistry) {
		this(serviceId, rules, meterRegistry, new CanaryMeters(serviceId, meterRegistry));
		putInForce();
	}

	/**
	 * Creates the router of one service; its percentage choices are counted once it is
	 * {@link #putInForce() put in force}, so that a router prepared for rules that never
	 * take effect leaves no series behind.
	 * @param serviceId the service
	 * @param rules the rules
	 * @param meterRegistry where {@value #FALLBACK_METER} is registered
	 * @param canaryMeters the service's canary meters, shared by every version of its
	 * router
	 */
	public GrayRouter(String serviceId, GrayRules rules, MeterRegistry meterRegistry, CanaryMeters canaryMeters) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.rules = Objects.requireNonNull(rules, "rules");
		this.tagHeaderKey = rules.header().toLowerCase(Locale.ROOT);
		this.hashKeyHeaderKey = (rules.hashKeyHeader() != null) ? rules.hashKeyHeader().toLowerCase(Locale.ROOT) : null;
		this.laneRules = rules.laneRules().toArray(new LaneRule[0]);
		this.canaryTags = rules.canaryPercentages().keySet().toArray(new String[0]);
		this.canaryCumulative = new double[this.canaryTags.length];
		double sum = 0;
		for (int i = 0; i < this.canaryTags.length; i++) {
			sum += Objects.requireNonNull(rules.canaryPercentages().get(this.canaryTags[i]), "percentage") / 100.0;
			this.canaryCumulative[i] = sum;
		}
		this.fallbacks = Counter.builder(FALLBACK_METER)
			.description("Requests whose wanted gray tag had no instance, handled by the fallback policy")
			.tag("service", serviceId)
			.tag("policy", rules.fallback().value())
			.register(meterRegistry);
		this.canaryMeters = Objects.requireNonNull(canaryMeters, "canaryMeters");
		this.canaryDraws = new Counter[(this.canaryTags.length > 0) ? this.canaryTags.length + 1 : 0];
	}

	/**
	 * This router takes over: its percentage rules become the service's canary series
	 * ({@link CanaryMeters#inForce}), and its choices are counted from now on. Call it
	 * before the router is published to the threads that route (a volatile write of the
	 * pipeline publishes the counters with it). Idempotent.
	 * @return this router
	 */
	public GrayRouter putInForce() {
		this.canaryMeters.inForce(this.rules.canaryPercentages());
		for (int i = 0; i < this.canaryTags.length; i++) {
			this.canaryDraws[i] = this.canaryMeters.counter(this.canaryTags[i]);
		}
		if (this.canaryTags.length > 0) {
			this.canaryDraws[this.canaryTags.length] = this.canaryMeters.counter(CanaryMeters.BASELINE_LANE);
		}
		return this;
	}

	/**
	 * The service's canary meters, which the next version of this router shares.
	 * @return the meters
	 */
	public CanaryMeters canaryMeters() {
		return this.canaryMeters;
	}

	/**
	 * The rules in force.
	 * @return the rules
	 */
	public GrayRules rules() {
		return this.rules;
	}

	/**
	 * The lane of one request: the tag it wants is the one of the first
	 * {@link GrayRules#laneRules() lane rule} it matches (headers of the outbound
	 * request, else propagated from the inbound one; cookies and query parameters of the
	 * outbound request), else the request's {@link GrayRules#header() header} (outbound,
	 * else propagated), else the caller's {@link GrayRules#ownTag() own tag}; the
	 * {@link GrayRules#hashKeyHeader() hash-key header} makes a percentage choice sticky.
	 * @param candidates the service's instances
	 * @param request the request being load-balanced
	 * @return as {@link #route}
	 */
	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		String wanted = (this.laneRules.length > 0) ? LaneRule.firstMatch(this.laneRules, request) : null;
		if (wanted == null) {
			wanted = request.header(this.tagHeaderKey);
		}
		String hashKey = (this.hashKeyHeaderKey != null) ? request.header(this.hashKeyHeaderKey) : null;
		return route(candidates, (wanted != null) ? wanted : this.rules.ownTag(), hashKey, ThreadLocalRandom.current());
	}

	/**
	 * Runs at {@link CandidateFilter#GRAY_ORDER}.
	 * @return {@value CandidateFilter#GRAY_ORDER}
	 */
	@Override
	public int getOrder() {
		return GRAY_ORDER;
	}

	/**
	 * This filter leaves no candidate only when the request wants a tag no instance has
	 * and the fallback is {@code none}.
	 * @return {@link NoInstanceReason#GRAY_FALLBACK_NONE}
	 */
	@Override
	public NoInstanceReason emptyReason() {
		return NoInstanceReason.GRAY_FALLBACK_NONE;
	}

	/**
	 * The lane of one request.
	 * @param candidates the service's instances
	 * @param wantedTag the tag the request wants, any case, or {@code null}/blank for
	 * none
	 * @param hashKey value of the hash-key header, or {@code null}; makes percentage
	 * choices sticky
	 * @param random used only for a percentage choice without hash key
	 * @return a subset of {@code candidates} (possibly empty, possibly {@code candidates}
	 * itself)
	 */
	public InstanceSnapshot route(InstanceSnapshot candidates, @Nullable String wantedTag, @Nullable String hashKey,
			RandomGenerator random) {
		Lanes lanes = candidates.derive(this, this.lanes);
		if (wantedTag != null) {
			// A tag is usually sent as the instances declare it (trimmed, lower case):
			// found without normalizing it first.
			InstanceSnapshot lane = lanes.byTag.get(wantedTag);
			if (lane != null) {
				return lane;
			}
		}
		String tag = GrayRules.normalize(wantedTag);
		if (tag != null) {
			InstanceSnapshot lane = lanes.byTag.get(tag);
			if (lane != null) {
				return lane;
			}
			if (this.rules.baselineTags().contains(tag)) {
				return lanes.baselineOrAll;
			}
			return fallback(lanes, tag);
		}
		if (this.canaryTags.length > 0) {
			double u = (hashKey != null) ? unitHash(hashKey) : UniformDraws.unit(random);
			for (int i = 0; i < this.canaryTags.length; i++) {
				if (u < this.canaryCumulative[i]) {
					InstanceSnapshot lane = lanes.canary[i];
					if (lane != null) {
						count(this.canaryDraws[i]);
						return lane;
					}
					break;
				}
			}
			count(this.canaryDraws[this.canaryTags.length]);
		}
		return this.rules.isolateBaseline() ? lanes.baselineOrAll : lanes.all;
	}

	private static void count(@Nullable Counter draws) {
		if (draws != null) {
			draws.increment();
		}
	}

	private InstanceSnapshot fallback(Lanes lanes, String tag) {
		this.fallbacks.increment();
		this.warnings.once(tag,
				(key) -> log.warn(
						"No instance of service '{}' has tag '{}' (tags seen: {}); requests for it go to {} "
								+ "(atlas.gray.fallback={})",
						this.serviceId, tag, lanes.byTag.keySet(), describe(this.rules.fallback()),
						this.rules.fallback()));
		return switch (this.rules.fallback()) {
			case BASELINE -> lanes.baselineOrAll;
			case ALL -> lanes.all;
			case NONE -> lanes.none;
		};
	}

	private static String describe(GrayFallback fallback) {
		return switch (fallback) {
			case BASELINE -> "the baseline instances";
			case ALL -> "all instances";
			case NONE -> "no instance (NoInstanceAvailableException)";
		};
	}

	/**
	 * A uniform value in [0, 1) from a key: {@code String.hashCode} mixed by
	 * MurmurHash3's 32-bit finalizer so that similar keys spread, then taken modulo
	 * 10,000 (a resolution of 0.01 %).
	 */
	static double unitHash(String key) {
		int h = key.hashCode();
		h ^= h >>> 16;
		h *= 0x85ebca6b;
		h ^= h >>> 13;
		h *= 0xc2b2ae35;
		h ^= h >>> 16;
		return Integer.remainderUnsigned(h, 10_000) / 10_000.0;
	}

	/** The lanes of one snapshot, computed once. */
	private final class Lanes {

		final InstanceSnapshot all;

		final InstanceSnapshot baselineOrAll;

		final InstanceSnapshot none;

		final Map<String, InstanceSnapshot> byTag = new HashMap<>();

		/**
		 * The lane of each percentage rule's tag, in rule order; {@code null} if none.
		 */
		final @Nullable InstanceSnapshot[] canary;

		Lanes(InstanceSnapshot snapshot) {
			this.all = snapshot;
			this.none = snapshot.filter((i) -> false);
			Map<String, Boolean> tags = new HashMap<>();
			for (int i = 0; i < snapshot.size(); i++) {
				String tag = snapshot.attributes(i).tag();
				if (tag != null) {
					tags.put(tag, Boolean.TRUE);
				}
			}
			for (String tag : tags.keySet()) {
				this.byTag.put(tag, snapshot.filter((i) -> tag.equals(snapshot.attributes(i).tag())));
			}
			String[] canaryTags = GrayRouter.this.canaryTags;
			this.canary = new InstanceSnapshot[canaryTags.length];
			for (int i = 0; i < canaryTags.length; i++) {
				this.canary[i] = this.byTag.get(canaryTags[i]);
			}
			InstanceSnapshot baseline = snapshot.filter((i) -> isBaseline(snapshot.attributes(i).tag()));
			if (baseline.isEmpty() && !snapshot.isEmpty()) {
				GrayRouter.this.warnings.once(" no-baseline",
						(key) -> log.warn(
								"Service '{}' has no baseline instance (untagged or tagged {}); requests "
										+ "that want no tag go to all instances",
								GrayRouter.this.serviceId, GrayRouter.this.rules.baselineTags()));
			}
			this.baselineOrAll = baseline.isEmpty() ? snapshot : baseline;
		}

		private boolean isBaseline(@Nullable String tag) {
			return tag == null || GrayRouter.this.rules.baselineTags().contains(tag);
		}

	}

}
