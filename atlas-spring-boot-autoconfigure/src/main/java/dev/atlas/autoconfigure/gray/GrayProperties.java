package dev.atlas.autoconfigure.gray;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.ServiceOverlay;
import dev.atlas.loadbalancer.instance.MetadataKeys;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Gray-tag routing, {@code atlas.gray.*}: which lane (tagged instances) each request goes
 * to. The caller-level settings (on/off, header, metadata key, own tag) are here only;
 * the lane settings of {@link GrayLaneProperties} are the defaults of every service,
 * which {@code atlas.services.<serviceId>.gray.*} overrides. Mutable while being bound,
 * not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = GrayProperties.PREFIX)
public class GrayProperties extends GrayLaneProperties implements InitializingBean {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".gray";

	private static final String PERCENTAGES = " (each value is a percentage 0..100 of untagged requests, adding up to at most 100)";

	/**
	 * Whether requests are routed to lanes by gray tag. When false, every instance is a
	 * candidate.
	 */
	private boolean enabled = true;

	/**
	 * Request header naming the tag a request wants, X-Service-Version by default (e.g.
	 * X-Service-Version: v2).
	 */
	private String header = GrayRules.DEFAULT_HEADER;

	/**
	 * Instance metadata key holding an instance's tag, version by default. Instances
	 * without it are untagged (baseline).
	 */
	private String metadataKey = MetadataKeys.DEFAULT_TAG;

	/**
	 * This application's own tag, wanted by its outbound calls when the request names
	 * none, so that a canary caller calls canary providers. Empty (the default) for none.
	 */
	private @Nullable String ownTag;

	/**
	 * Lane rules, evaluated in order before the gray header: the first whose attribute
	 * (header, cookie or query parameter) matches names the tag the request wants, e.g.
	 * {tag: v2, header: X-User-Group, equals: beta}. Apply to every service.
	 */
	private List<LaneRuleProperties> rules = new ArrayList<>();

	/**
	 * The rules as {@link #afterPropertiesSet()} compiled them. Not named as its accessor
	 * {@link #laneRules()}: Spring's bean introspection takes a no-argument method named
	 * as a field for a read-only property (a record-style accessor), which Spring Cloud's
	 * rebinding then tries to reset, and cannot (an unmodifiable list), with a WARN.
	 */
	private List<LaneRule> compiledRules = List.of();

	/**
	 * Validates what binding cannot: blank header name or metadata key, lane rules.
	 * @throws IllegalArgumentException naming the property and what is allowed
	 */
	@Override
	public void afterPropertiesSet() {
		if (this.header == null || this.header.isBlank()) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + ".header: must be a header name, e.g. X-Service-Version");
		}
		if (this.metadataKey == null || this.metadataKey.isBlank()) {
			throw new IllegalArgumentException(
					"Invalid " + PREFIX + ".metadata-key: must be a metadata key, e.g. version");
		}
		List<LaneRule> compiled = new ArrayList<>();
		for (int i = 0; i < this.rules.size(); i++) {
			compiled.add(this.rules.get(i).toRule(PREFIX + ".rules[" + i + "]"));
		}
		this.compiledRules = List.copyOf(compiled);
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getHeader() {
		return this.header;
	}

	public void setHeader(String header) {
		this.header = header;
	}

	public String getMetadataKey() {
		return this.metadataKey;
	}

	public void setMetadataKey(String metadataKey) {
		this.metadataKey = metadataKey;
	}

	public List<LaneRuleProperties> getRules() {
		return this.rules;
	}

	public void setRules(List<LaneRuleProperties> rules) {
		this.rules = rules;
	}

	/**
	 * The lane rules as validated by {@link #afterPropertiesSet()}.
	 * @return the rules in order; empty before validation or when none is configured
	 */
	public List<LaneRule> laneRules() {
		return this.compiledRules;
	}

	public @Nullable String getOwnTag() {
		return this.ownTag;
	}

	public void setOwnTag(@Nullable String ownTag) {
		this.ownTag = ownTag;
	}

	/**
	 * The gray rules of one service: this caller's header and own tag with the service's
	 * lane settings and canary percentages
	 * ({@code atlas.services.<serviceId>.gray.weights}).
	 * @param serviceId the service id; empty for the rules of no service in particular
	 * @param lanes the service's lane settings, {@code atlas.gray.*} overlaid by
	 * {@code atlas.services.<serviceId>.gray.*}
	 * @return the rules
	 * @throws IllegalArgumentException naming the weights property when a percentage is
	 * invalid
	 */
	public GrayRules rulesFor(String serviceId, ServiceGrayProperties lanes) {
		String property = ServiceOverlay.propertyName(serviceId, "gray." + ServiceGrayProperties.WEIGHTS);
		Map<String, Double> weights = lanes.getWeights();
		try {
			return new GrayRules(this.header, this.ownTag, lanes.getFallback(), lanes.isIsolateBaseline(),
					lanes.getBaselineTags(), weights, lanes.getHashKeyHeader(), this.compiledRules);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid " + property + ": " + ex.getMessage() + PERCENTAGES, ex);
		}
	}

}
