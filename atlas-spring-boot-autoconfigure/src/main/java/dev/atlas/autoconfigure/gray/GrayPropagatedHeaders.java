package dev.atlas.autoconfigure.gray;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

import dev.atlas.autoconfigure.propagation.PropagatedHeaderSource;
import dev.atlas.autoconfigure.runtime.ReloadListener;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.Reload;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.routing.GrayRules;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * The headers gray routing needs carried from inbound requests to outbound calls: the
 * gray header ({@code atlas.gray.header}) and the hash-key header of the caller and of
 * every service that sets its own ({@code atlas.services.<id>.gray.hash-key-header}). At
 * startup they are those configured; after a runtime change, those of every service's
 * rules in force (not those of a change that was rejected); a change with an invalid
 * caller-level value changes nothing. Runs before the listener that puts the propagated
 * headers in force. Thread-safe.
 *
 * @since 0.1.0
 */
public final class GrayPropagatedHeaders implements PropagatedHeaderSource, ReloadListener, Ordered {

	private final ObjectProvider<AtlasSettings> settings;

	private volatile List<@Nullable String> names;

	/**
	 * Creates the source.
	 * @param atStartup the names configured at startup, in order; may contain
	 * {@code null} or blank elements (ignored)
	 * @param settings the rules in force (there when Atlas is the load balancer, which
	 * alone applies runtime changes)
	 */
	public GrayPropagatedHeaders(Collection<@Nullable String> atStartup, ObjectProvider<AtlasSettings> settings) {
		this.names = new ArrayList<>(atStartup);
		this.settings = settings;
	}

	@Override
	public Collection<@Nullable String> headerNames() {
		return Collections.unmodifiableList(this.names);
	}

	@Override
	public void changed(Reload reload) {
		AtlasSettings rules = this.settings.getIfAvailable();
		if (reload.caller() == null || rules == null) {
			return;
		}
		List<@Nullable String> inForce = new ArrayList<>();
		for (String serviceId : reload.outcomes().keySet()) {
			ServiceSettings service = rules.inForce(serviceId);
			if (service != null) {
				GrayRules gray = service.get(GraySettings.SECTION).gray();
				inForce.add(gray.header());
				inForce.add(gray.hashKeyHeader());
			}
		}
		this.names = inForce;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
