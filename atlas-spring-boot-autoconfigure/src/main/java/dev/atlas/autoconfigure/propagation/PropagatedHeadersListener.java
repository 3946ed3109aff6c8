package dev.atlas.autoconfigure.propagation;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.runtime.ReloadListener;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.CallerSettings;
import dev.atlas.autoconfigure.settings.Reload;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.bind.Bindable;

/**
 * Keeps the propagated headers on the rules in force after a runtime change: the
 * configured ones ({@code atlas.propagation.headers}), and the gray and hash-key headers
 * of every service's rules in force (not those of a change that was rejected); a change
 * with an invalid caller-level value changes nothing. Thread-safe (called under the
 * runtime rules' lock).
 *
 * @since 0.1.0
 */
public final class PropagatedHeadersListener implements ReloadListener {

	private static final Logger log = LoggerFactory.getLogger(PropagatedHeadersListener.class);

	private final PropagatedHeaders headers;

	private final ObjectProvider<AtlasSettings> settings;

	/**
	 * Creates the listener.
	 * @param headers the propagated headers
	 * @param settings the rules in force (read when a change is applied)
	 */
	public PropagatedHeadersListener(PropagatedHeaders headers, ObjectProvider<AtlasSettings> settings) {
		this.headers = headers;
		this.settings = settings;
	}

	@Override
	public void changed(Reload reload) {
		CallerSettings caller = reload.caller();
		if (caller == null) {
			return;
		}
		PropagationProperties propagation = caller.binder()
			.bind(PropagationProperties.PREFIX, Bindable.ofInstance(new PropagationProperties()))
			.orElseGet(PropagationProperties::new);
		Set<String> names = new LinkedHashSet<>();
		propagation.getHeaders().forEach((header) -> PropagatedHeaders.add(names, header));
		AtlasSettings rules = this.settings.getObject();
		for (String serviceId : reload.outcomes().keySet()) {
			ServiceSettings inForce = rules.inForce(serviceId);
			if (inForce != null) {
				PropagatedHeaders.add(names, inForce.get(GraySettings.SECTION).gray().header());
				PropagatedHeaders.add(names, inForce.get(GraySettings.SECTION).gray().hashKeyHeader());
			}
		}
		if (!names.equals(new LinkedHashSet<>(this.headers.names()))) {
			log.info("Atlas propagates the headers {} (was {})", names, this.headers.names());
			this.headers.names(names);
		}
	}

}
