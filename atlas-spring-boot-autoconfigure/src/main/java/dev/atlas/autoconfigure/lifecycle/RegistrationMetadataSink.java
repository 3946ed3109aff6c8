package dev.atlas.autoconfigure.lifecycle;

import java.util.Map;

import org.springframework.cloud.client.serviceregistry.Registration;

/**
 * Told what {@link RegistrationMetadata} stamped into a registration's metadata, just
 * before the registry registers it; for a registry whose registration copied its metadata
 * earlier, so that a write to {@link Registration#getMetadata()} alone would never reach
 * the registry (Eureka builds its {@code InstanceInfo} from a copy when the client
 * starts). Called on the registering thread, which may be the main thread, the thread of
 * {@code atlas.lifecycle.register-delay} or a configuration refresh's: implementations
 * are thread-safe; what they throw is logged and does not stop the registration.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RegistrationMetadataSink {

	/**
	 * Atlas stamped {@code stamped} into {@code registration.getMetadata()}.
	 * @param registration the registration about to be registered, not {@code null}
	 * @param stamped the entries written, in order; not empty
	 * ({@code atlas.registered-at} at least); read it during the call only
	 */
	void stamped(Registration registration, Map<String, String> stamped);

}
