package dev.atlas.autoconfigure.gray;

import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.routing.GrayRules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.context.annotation.Bean;

/**
 * The lane rules ({@code atlas.gray.rules}) where requests enter this application
 * (inbound requests through Atlas's propagation filters, requests Spring Cloud Gateway
 * routes), kept on the rules in force when they change at runtime. Active with Atlas's
 * load balancer (its {@link AtlasSettings}).
 *
 * @since 0.1.0
 */
@AutoConfiguration(afterName = "dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration",
		beforeName = { "dev.atlas.autoconfigure.gateway.AtlasGatewayAutoConfiguration",
				"dev.atlas.autoconfigure.propagation.AtlasPropagationAutoConfiguration" })
@ConditionalOnBean(AtlasSettings.class)
public final class AtlasGrayAutoConfiguration {

	private static final Logger log = LoggerFactory.getLogger(AtlasGrayAutoConfiguration.class);

	AtlasGrayAutoConfiguration() {
	}

	/**
	 * The lane rules where requests enter; none when gray routing is off.
	 * @param settings the settings
	 * @return the tagger, which {@link LaneRulesListener} keeps on the rules in force
	 */
	@Bean
	LaneTagger atlasLaneTagger(AtlasSettings settings) {
		GrayRules gray = settings.settingsFor("").get(GraySettings.SECTION).gray();
		boolean enabled = settings.atStartup(GraySettings.CALLER).isEnabled();
		if (!enabled && !gray.laneRules().isEmpty()) {
			log.warn("atlas.gray.rules are ignored: gray routing is off (atlas.gray.enabled=false)");
		}
		return new LaneTagger(enabled ? gray : GrayRules.DEFAULTS);
	}

	/**
	 * Keeps the lane rules where requests enter on the rules in force.
	 * @param lanes the lane rules where requests enter
	 * @param settings the settings
	 * @return the listener
	 */
	@Bean
	LaneRulesListener atlasLaneRulesListener(LaneTagger lanes, AtlasSettings settings) {
		return new LaneRulesListener(lanes, settings);
	}

}
