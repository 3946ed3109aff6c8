package dev.atlas.autoconfigure.propagation;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.atlas.autoconfigure.runtime.ReloadListener;
import dev.atlas.autoconfigure.settings.CallerSettings;
import dev.atlas.autoconfigure.settings.Reload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Keeps the propagated headers on the rules in force after a runtime change: the
 * configured ones ({@code atlas.propagation.headers}), then those every
 * {@link PropagatedHeaderSource} needs for the rules in force (the gray and hash-key
 * headers of every service's rules in force, not those of a change that was rejected); a
 * change with an invalid caller-level value (an invalid {@code atlas.propagation.*}
 * included) changes nothing. Ordered last, after the sources that listen to changes
 * themselves (such as the gray headers, ordered first). Thread-safe (called under the
 * runtime rules' lock).
 *
 * @since 0.1.0
 */
public final class PropagatedHeadersListener implements ReloadListener, Ordered {

	private static final Logger log = LoggerFactory.getLogger(PropagatedHeadersListener.class);

	private final PropagatedHeaders headers;

	private final ObjectProvider<PropagatedHeaderSource> sources;

	/**
	 * Creates the listener.
	 * @param headers the propagated headers
	 * @param sources the header names the concerns need carried (read when a change is
	 * applied)
	 */
	public PropagatedHeadersListener(PropagatedHeaders headers, ObjectProvider<PropagatedHeaderSource> sources) {
		this.headers = headers;
		this.sources = sources;
	}

	@Override
	public void changed(Reload reload) {
		CallerSettings caller = reload.caller();
		if (caller == null) {
			return;
		}
		PropagationProperties propagation = caller.get(PropagationSection.CALLER);
		Set<String> names = AtlasPropagationAutoConfiguration.headerNames(propagation.getHeaders(),
				this.sources.orderedStream().toList());
		if (!names.equals(new LinkedHashSet<>(this.headers.names()))) {
			log.info("Atlas propagates the headers {} (was {})", names, this.headers.names());
			this.headers.names(names);
		}
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
