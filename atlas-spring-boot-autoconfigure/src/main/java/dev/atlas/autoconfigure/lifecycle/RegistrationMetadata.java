package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.instance.MetadataKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.serviceregistry.Registration;

/**
 * Writes Atlas's metadata into a {@link Registration} at the moment it is registered: the
 * registration time {@code atlas.registered-at} (epoch ms, which callers use for warmup),
 * and the application's gray tag and cluster when they are configured in {@code atlas.*}
 * but missing from the registry's own metadata. Atlas calls it from a proxy around the
 * application's {@code ServiceRegistry}, so it works for every registry whose
 * registration exposes mutable metadata (Nacos, ZooKeeper, Consul, Eureka).
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class RegistrationMetadata {

	private static final Logger log = LoggerFactory.getLogger(RegistrationMetadata.class);

	private final Map<String, String> extra;

	private final Clock clock;

	private final List<RegistrationMetadataSink> sinks;

	private volatile long registeredAt = -1;

	/**
	 * Creates the stamper.
	 * @param extra metadata to add when missing (tag, cluster)
	 * @param clock source of {@code atlas.registered-at}
	 */
	public RegistrationMetadata(Map<String, String> extra, Clock clock) {
		this(extra, clock, List.of());
	}

	/**
	 * Creates the stamper.
	 * @param extra metadata to add when missing (tag, cluster)
	 * @param clock source of {@code atlas.registered-at}
	 * @param sinks told of what was stamped, in order, for registries that copied the
	 * registration's metadata before it was stamped (Eureka's {@code InstanceInfo})
	 */
	public RegistrationMetadata(Map<String, String> extra, Clock clock, List<RegistrationMetadataSink> sinks) {
		this.extra = Map.copyOf(extra);
		this.clock = clock;
		this.sinks = List.copyOf(sinks);
	}

	/**
	 * Stamps a registration about to be registered.
	 * @param registration the registration
	 * @return the time stamped as {@code atlas.registered-at}, epoch ms; pass it to
	 * {@link #registered(long)} once the registry accepted the registration
	 */
	public long stamp(Registration registration) {
		long now = this.clock.millis();
		Map<String, String> metadata = registration.getMetadata();
		try {
			if (metadata == null) {
				throw new UnsupportedOperationException("no metadata");
			}
			Map<String, String> stamped = new LinkedHashMap<>();
			stamped.put(MetadataKeys.REGISTERED_AT, Long.toString(now));
			this.extra.forEach((key, value) -> {
				String current = metadata.get(key);
				if (current == null || current.isBlank()) {
					stamped.put(key, value);
				}
			});
			metadata.putAll(stamped);
			for (RegistrationMetadataSink sink : this.sinks) {
				publish(sink, registration, stamped);
			}
		}
		catch (UnsupportedOperationException ex) {
			log.warn(
					"The registration metadata of '{}' is read-only; callers will not see {} and will time "
							+ "warmup from when they first see this instance",
					registration.getServiceId(), MetadataKeys.REGISTERED_AT);
		}
		return now;
	}

	/**
	 * Tells a sink, which must not keep the registration from registering: a failure is
	 * logged (WARN) and the registration goes on without that registry seeing the stamp.
	 */
	private static void publish(RegistrationMetadataSink sink, Registration registration, Map<String, String> stamped) {
		try {
			sink.stamped(registration, stamped);
		}
		catch (RuntimeException ex) {
			log.warn(
					"Atlas's registration metadata {} could not be handed to the registry of '{}'; it registers "
							+ "without it (callers time warmup from when they first see this instance): {}",
					stamped.keySet(), registration.getServiceId(), ex.toString());
		}
	}

	/**
	 * The registry accepted a registration stamped by {@link #stamp} (its
	 * {@code ServiceRegistry.register} returned; a registration it refused, by throwing,
	 * is not reported).
	 * @param stampedAt what {@link #stamp} returned, epoch ms
	 */
	public void registered(long stampedAt) {
		this.registeredAt = stampedAt;
	}

	/**
	 * When this application last registered: the {@code atlas.registered-at} of the last
	 * registration the registry accepted.
	 * @return epoch ms, or {@code -1} when no registration was accepted (yet)
	 */
	public long registeredAt() {
		return this.registeredAt;
	}

}
