package dev.atlas.loadbalancer.instance;

import java.net.URI;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * An instance whose host is an IPv6 literal written without brackets ({@code ::1},
 * {@code fd00::7}), as Nacos and other registries list it, seen with the brackets a URI
 * needs ({@code [::1]}). Spring Cloud's {@code LoadBalancerUriTools} puts the host into
 * the request's URI as it is; for a URI with percent-encoded parts (an encoded path
 * segment, a non-ASCII query) that fails ({@code Invalid character ':' for HOST_IPV4}),
 * so Atlas hands Spring Cloud this view to build the URI from.
 *
 * <p>
 * Everything but the host is the instance's own; {@link #original} gives the instance
 * back, which Atlas's request lifecycle callbacks do before they look an instance up (its
 * statistics and outlier state are the listed instance's). Two views are equal when they
 * show equal instances. A link-local address with a zone ({@code fe80::1%eth0}) is not
 * supported: its {@code %} would need encoding as {@code %25} (RFC 6874), which the JDK's
 * URI does not read back. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class BracketedHost implements ServiceInstance {

	private final ServiceInstance instance;

	private final String host;

	private BracketedHost(ServiceInstance instance, String host) {
		this.instance = instance;
		this.host = '[' + host + ']';
	}

	/**
	 * The instance to build a request's URI from.
	 * @param instance a chosen instance
	 * @return a bracketed view when its host is an IPv6 literal without brackets, else
	 * the instance itself
	 */
	public static ServiceInstance forUri(ServiceInstance instance) {
		String host = instance.getHost();
		if (host != null && host.indexOf(':') >= 0 && !host.startsWith("[") && !(instance instanceof BracketedHost)) {
			return new BracketedHost(instance, host);
		}
		return instance;
	}

	/**
	 * The instance itself, behind a bracketed view or not.
	 * @param instance an instance, possibly a view made by {@link #forUri}
	 * @return the instance the view shows; the argument when it is no view
	 */
	public static ServiceInstance original(ServiceInstance instance) {
		return (instance instanceof BracketedHost view) ? view.instance : instance;
	}

	/**
	 * The instance a load balancer's response chose, behind a bracketed view or not.
	 * @param response a response, or {@code null}
	 * @return the chosen instance; {@code null} when there is no response or it has no
	 * instance
	 */
	public static @Nullable ServiceInstance chosen(@Nullable Response<ServiceInstance> response) {
		ServiceInstance server = (response != null && response.hasServer()) ? response.getServer() : null;
		return (server instanceof BracketedHost view) ? view.instance : server;
	}

	@Override
	public String getHost() {
		return this.host;
	}

	@Override
	public @Nullable String getInstanceId() {
		return this.instance.getInstanceId();
	}

	@Override
	public String getServiceId() {
		return this.instance.getServiceId();
	}

	@Override
	public int getPort() {
		return this.instance.getPort();
	}

	@Override
	public boolean isSecure() {
		return this.instance.isSecure();
	}

	@Override
	public URI getUri() {
		return this.instance.getUri();
	}

	@Override
	public @Nullable Map<String, String> getMetadata() {
		return this.instance.getMetadata();
	}

	@Override
	public @Nullable String getScheme() {
		return this.instance.getScheme();
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other || (other instanceof BracketedHost view && this.instance.equals(view.instance));
	}

	@Override
	public int hashCode() {
		return this.instance.hashCode();
	}

	@Override
	public String toString() {
		return "BracketedHost[" + this.instance + ']';
	}

}
