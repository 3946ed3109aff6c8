package dev.atlas.loadbalancer.instance;

import java.util.Comparator;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The identity by which Atlas recognises an instance across refreshes, when the registry
 * client hands out new objects for it: its instance id <em>and</em> host <em>and</em>
 * port. Two instances that report the same id from different addresses (registries that
 * key ids per node, hand-typed ids, a copied configuration) are two instances; an
 * instance without an id is its host and port. Used by every per-instance state that
 * outlives a snapshot (warmup's first-seen times, request statistics, smooth round
 * robin's positions per candidate set) and by retry avoidance.
 *
 * <p>
 * A snapshot computes the key of each of its instances once
 * ({@link InstanceSnapshot#key(int)}); {@link #matches} and {@link #same} compare an
 * instance without allocating. Immutable and thread-safe; equality and hash code are by
 * value.
 *
 * @since 0.1.0
 */
public final class InstanceKey {

	/** Orders keys by id (absent first), then host (absent first), then port. */
	public static final Comparator<InstanceKey> ORDER = Comparator
		.comparing(InstanceKey::id, Comparator.nullsFirst(Comparator.<String>naturalOrder()))
		.thenComparing(InstanceKey::host, Comparator.nullsFirst(Comparator.<String>naturalOrder()))
		.thenComparingInt(InstanceKey::port);

	private final @Nullable String id;

	private final @Nullable String host;

	private final int port;

	private final int hash;

	private InstanceKey(@Nullable String id, @Nullable String host, int port) {
		this.id = id;
		this.host = host;
		this.port = port;
		this.hash = (31 * Objects.hashCode(id) + Objects.hashCode(host)) * 31 + port;
	}

	/**
	 * The key of an instance. Allocates; on the request path compare with
	 * {@link #matches} or use {@link InstanceSnapshot#key(int)}.
	 * @param instance an instance
	 * @return its key
	 */
	public static InstanceKey of(ServiceInstance instance) {
		return new InstanceKey(instance.getInstanceId(), instance.getHost(), instance.getPort());
	}

	/**
	 * Whether two instances are the same instance: the same object, or the same id (both
	 * absent counts as the same), host and port. Allocates nothing.
	 * @param a an instance
	 * @param b another instance
	 * @return {@code true} when they have the same key
	 */
	public static boolean same(ServiceInstance a, ServiceInstance b) {
		return a == b || (a.getPort() == b.getPort() && Objects.equals(a.getInstanceId(), b.getInstanceId())
				&& Objects.equals(a.getHost(), b.getHost()));
	}

	/**
	 * Whether an instance has this key. Allocates nothing.
	 * @param instance an instance
	 * @return {@code true} when its id, host and port are this key's
	 */
	public boolean matches(ServiceInstance instance) {
		return instance.getPort() == this.port && Objects.equals(instance.getInstanceId(), this.id)
				&& Objects.equals(instance.getHost(), this.host);
	}

	/**
	 * Whether this key has an id, host and port: {@code equals} of the key they would
	 * make, without making it. Allocates nothing.
	 * @param id an instance id, or {@code null} for none
	 * @param host a host, or {@code null}
	 * @param port a port
	 * @return {@code true} when all three are this key's
	 */
	public boolean matches(@Nullable String id, @Nullable String host, int port) {
		return port == this.port && Objects.equals(id, this.id) && Objects.equals(host, this.host);
	}

	/**
	 * The instance id.
	 * @return the id the instance reported, or {@code null} when it has none
	 */
	public @Nullable String id() {
		return this.id;
	}

	/**
	 * The host.
	 * @return the host the instance reported, {@code null} only for a malformed instance
	 */
	public @Nullable String host() {
		return this.host;
	}

	/**
	 * The port.
	 * @return the port the instance reported
	 */
	public int port() {
		return this.port;
	}

	/**
	 * The address, for log lines.
	 * @return {@code host:port}
	 */
	public String address() {
		return this.host + ":" + this.port;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other || (other instanceof InstanceKey key && this.hash == key.hash && this.port == key.port
				&& Objects.equals(this.id, key.id) && Objects.equals(this.host, key.host));
	}

	@Override
	public int hashCode() {
		return this.hash;
	}

	/**
	 * For log lines: {@code host:port}, plus the instance id in parentheses when there is
	 * one that differs from it.
	 * @return e.g. {@code 10.0.0.1:8080 (user-service-8080)}
	 */
	@Override
	public String toString() {
		String address = address();
		return (this.id == null || this.id.equals(address)) ? address : address + " (" + this.id + ')';
	}

}
