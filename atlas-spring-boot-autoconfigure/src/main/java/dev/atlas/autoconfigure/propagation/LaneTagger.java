package dev.atlas.autoconfigure.propagation;

import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import dev.atlas.loadbalancer.spi.RoutingAttributes;
import org.jspecify.annotations.Nullable;

/**
 * The lane rules in force where a request enters this application (an inbound servlet or
 * WebFlux request, a request Spring Cloud Gateway routes): the tag of the first rule the
 * request matches is written as the gray header ({@code X-Service-Version}), so that
 * every later hop follows the lane without evaluating the rules again. Holds the rules of
 * {@code atlas.gray.rules} and {@code atlas.gray.header} in force, replaced when they
 * change at runtime. Thread-safe: the rules are read once per request from a volatile
 * field.
 *
 * @since 0.1.0
 */
public final class LaneTagger {

	private volatile Rules rules;

	/**
	 * Creates the tagger.
	 * @param gray the caller's gray rules (the lane rules and the header are the same for
	 * every service)
	 */
	public LaneTagger(GrayRules gray) {
		this(gray.header(), gray.laneRules());
	}

	/**
	 * Creates the tagger.
	 * @param header the gray header, e.g. {@code X-Service-Version}; not blank
	 * @param laneRules the lane rules in order, maybe empty
	 */
	public LaneTagger(String header, List<LaneRule> laneRules) {
		this.rules = new Rules(header, laneRules);
	}

	/**
	 * Puts other rules in force (a runtime change); requests tagged before keep their
	 * tag.
	 * @param gray the caller's gray rules in force
	 */
	public void update(GrayRules gray) {
		update(gray.header(), gray.laneRules());
	}

	/**
	 * Puts other rules in force (a runtime change); requests tagged before keep their
	 * tag.
	 * @param header the gray header in force; not blank
	 * @param laneRules the lane rules in force, in order, maybe empty
	 */
	public void update(String header, List<LaneRule> laneRules) {
		this.rules = new Rules(header, laneRules);
	}

	/**
	 * The gray header to write on a request by the lane rules, read with the rules in one
	 * go (a runtime change in between cannot mix them).
	 * @param request the request's attributes
	 * @return the header name (as configured) and the tag of the first rule the request
	 * matches, or {@code null} when none does or there is no rule
	 */
	public Map.@Nullable Entry<String, String> headerFor(RoutingAttributes request) {
		Rules current = this.rules;
		if (current.laneRules.length == 0) {
			return null;
		}
		String tag = LaneRule.firstMatch(current.laneRules, request);
		return (tag != null) ? Map.entry(current.header, tag) : null;
	}

	/**
	 * Whether any lane rule is in force; when not, {@link #headerFor} is always
	 * {@code null}.
	 * @return {@code true} when there are rules
	 */
	public boolean hasRules() {
		return this.rules.laneRules.length > 0;
	}

	/**
	 * The gray header a tag is written to.
	 * @return the header name in force as configured, e.g. {@code X-Service-Version}
	 */
	public String header() {
		return this.rules.header;
	}

	/**
	 * The lane rules in force.
	 * @return the rules in order, maybe empty
	 */
	public List<LaneRule> rules() {
		return List.of(this.rules.laneRules);
	}

	/**
	 * The routing context of an inbound request with the tag its lane rules give written
	 * as the gray header (rules win over a gray header the request carries).
	 * @param context what the propagated headers captured
	 * @param request the inbound request
	 * @return {@code context}, or a copy with the gray header set when a rule matches
	 */
	public RoutingContext tag(RoutingContext context, RoutingAttributes request) {
		Map.Entry<String, String> lane = headerFor(request);
		return (lane != null) ? context.with(lane.getKey(), lane.getValue()) : context;
	}

	private static final class Rules {

		final LaneRule[] laneRules;

		final String header;

		Rules(String header, List<LaneRule> laneRules) {
			this.laneRules = laneRules.toArray(new LaneRule[0]);
			this.header = header.trim();
		}

	}

}
