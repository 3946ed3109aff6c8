package dev.atlas.autoconfigure.propagation;

import java.util.ArrayList;
import java.util.List;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.routing.GrayRules;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Propagation of routing headers, {@code atlas.propagation.*}: carrying them from inbound
 * requests to outbound calls, across threads and reactive chains. Mutable while being
 * bound, not thread-safe.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = PropagationProperties.PREFIX)
public class PropagationProperties {

	/** Prefix of this section. */
	public static final String PREFIX = AtlasSettings.PREFIX + ".propagation";

	/**
	 * Whether routing headers are carried from inbound requests to outbound @LoadBalanced
	 * calls, across threads (@Async, Spring executors) and reactive chains.
	 */
	private boolean enabled = true;

	/**
	 * Headers captured from inbound requests and written on outbound calls (when the
	 * outbound request does not set them itself). X-Service-Version by default. The gray
	 * header and the hash-key headers are always included.
	 */
	private List<String> headers = new ArrayList<>(List.of(GrayRules.DEFAULT_HEADER));

	/**
	 * Whether Atlas turns on Reactor's automatic context propagation
	 * (Hooks.enableAutomaticContextPropagation, same effect as
	 * spring.reactor.context-propagation=auto), so that code reading the routing context
	 * from its thread (a blocking client, or a Mono blocked on) after a scheduler hop
	 * still sees it. Off by default: the hook applies to every Reactor operator of the
	 * application and costs a WebClient call in a servlet application about a quarter of
	 * its throughput; WebClient calls, WebFlux and the gateway carry the routing context
	 * in Reactor's Context without it.
	 */
	private boolean reactorAutomatic;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public List<String> getHeaders() {
		return this.headers;
	}

	public void setHeaders(List<String> headers) {
		this.headers = headers;
	}

	public boolean isReactorAutomatic() {
		return this.reactorAutomatic;
	}

	public void setReactorAutomatic(boolean reactorAutomatic) {
		this.reactorAutomatic = reactorAutomatic;
	}

}
