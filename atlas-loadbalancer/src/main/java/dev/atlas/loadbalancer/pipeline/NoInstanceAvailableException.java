package dev.atlas.loadbalancer.pipeline;

import java.util.Objects;

import dev.atlas.loadbalancer.spi.NoInstanceReason;
import org.jspecify.annotations.Nullable;

/**
 * No instance of a service was available for a request, and why. What a caller sees when
 * Atlas chooses nothing, through every client whose Spring Cloud path lets Atlas say so
 * (see the README); an {@link IllegalStateException}, as Spring Cloud's own "No instances
 * available for ..." is, and with the same message start. Immutable.
 *
 * @since 0.1.0
 */
public class NoInstanceAvailableException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String serviceId;

	private final NoInstanceReason reason;

	/**
	 * Creates the exception.
	 * @param serviceId the service
	 * @param reason why there was no instance
	 * @param cause the error Spring Cloud raised for it, or {@code null}
	 */
	public NoInstanceAvailableException(String serviceId, NoInstanceReason reason, @Nullable Throwable cause) {
		super("No instances available for " + serviceId + ": " + reason.description(), cause);
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		this.reason = Objects.requireNonNull(reason, "reason");
	}

	/**
	 * The service that had no instance.
	 * @return the service id as called
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * Why it had none.
	 * @return the reason
	 */
	public NoInstanceReason reason() {
		return this.reason;
	}

}
