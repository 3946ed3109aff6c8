package dev.atlas.autoconfigure.runtime;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.CallerSettings;
import dev.atlas.autoconfigure.settings.Reload;

/**
 * Hears of runtime changes of the rules, for what is configured once per caller rather
 * than per service (rules where requests enter, propagated headers, rules resolved at the
 * first request). Declare one as a bean of the application context; every one is called,
 * in order ({@link org.springframework.core.Ordered}, then registration order), under
 * {@link RuntimeRules}' lock. A listener should not throw: one that does is logged at
 * ERROR and skipped, and the others are still called.
 *
 * @since 0.1.0
 */
public interface ReloadListener {

	/**
	 * The caller-level settings of a change are valid and now in force; called before any
	 * service's rules change. Does nothing by default.
	 * @param caller the caller-level settings in force
	 */
	default void callerChanged(CallerSettings caller) {
	}

	/**
	 * Every service's change has been put in force or rejected. Does nothing by default.
	 * @param reload what was read: the caller-level settings ({@code null} when invalid:
	 * nothing changed then) and each service's outcome (read the rules in force with
	 * {@link AtlasSettings#inForce(String)})
	 */
	default void changed(Reload reload) {
	}

}
