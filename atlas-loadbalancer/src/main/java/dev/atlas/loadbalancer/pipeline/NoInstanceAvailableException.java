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

	/**
	 * Whether a failure, or its cause, is a request that found every candidate at the
	 * per-instance in-flight limit ({@link NoInstanceReason#SATURATED}): such a request
	 * is never retried, by any retry path Atlas owns (a retry would only add load to a
	 * fleet that is full).
	 * @param failure a failure, may be {@code null}
	 * @return {@code false} for {@code null}
	 */
	public static boolean isSaturated(@Nullable Throwable failure) {
		Throwable t = failure;
		// a bounded walk down the causes: a cycle of causes ends it too
		for (int depth = 0; t != null && depth < 16; depth++) {
			if (t instanceof NoInstanceAvailableException none && none.reason == NoInstanceReason.SATURATED) {
				return true;
			}
			t = t.getCause();
		}
		return false;
	}

}
