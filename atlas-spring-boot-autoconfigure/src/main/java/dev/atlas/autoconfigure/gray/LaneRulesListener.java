package dev.atlas.autoconfigure.gray;

import java.util.List;

import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.autoconfigure.runtime.ReloadListener;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.CallerSettings;
import dev.atlas.autoconfigure.settings.Reload;
import dev.atlas.loadbalancer.routing.LaneRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the lane rules where requests enter ({@link LaneTagger}) on the rules in force:
 * the caller-level ones of a runtime change whose caller-level settings are valid (lane
 * rules and the gray header are caller-level, checked when bound); a change with an
 * invalid caller-level value changes nothing. Nothing when gray routing is off (read only
 * at startup). Thread-safe (called under the runtime rules' lock).
 *
 * @since 0.1.0
 */
public final class LaneRulesListener implements ReloadListener {

	private static final Logger log = LoggerFactory.getLogger(LaneRulesListener.class);

	private final LaneTagger lanes;

	private final AtlasSettings settings;

	/**
	 * Creates the listener.
	 * @param lanes the lane rules where requests enter
	 * @param settings whether gray routing is on
	 */
	public LaneRulesListener(LaneTagger lanes, AtlasSettings settings) {
		this.lanes = lanes;
		this.settings = settings;
	}

	@Override
	public void changed(Reload reload) {
		CallerSettings caller = reload.caller();
		if (caller == null || !this.settings.atStartup(GraySettings.CALLER).isEnabled()) {
			return;
		}
		GrayProperties gray = caller.get(GraySettings.CALLER);
		List<LaneRule> rules = gray.laneRules();
		String header = gray.getHeader().trim();
		if (!rules.equals(this.lanes.rules()) || !header.equals(this.lanes.header())) {
			log.info("Atlas lane rules where requests enter: {} (was {})", rules, this.lanes.rules());
		}
		this.lanes.update(header, rules);
	}

}
