package dev.atlas.loadbalancer.pipeline;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

import dev.atlas.loadbalancer.spi.NoInstanceReason;

import org.springframework.cloud.client.loadbalancer.EmptyResponse;

/**
 * Spring Cloud's {@link EmptyResponse} that also tells which service had no instance and
 * why: what {@link AtlasLoadBalancer} answers when it chooses nothing. Every Spring Cloud
 * client treats it as the empty response it is (its {@code DISCARD} lifecycle callback,
 * the {@code loadbalancer.requests.discard} meter, its own error or 503); Atlas's client
 * adapters turn it into a {@link NoInstanceAvailableException}. One immutable instance
 * per service and reason, so answering it allocates nothing.
 *
 * @since 0.1.0
 */
public final class NoInstanceResponse extends EmptyResponse {

	private final String serviceId;

	private final NoInstanceReason reason;

	private NoInstanceResponse(String serviceId, NoInstanceReason reason) {
		this.serviceId = serviceId;
		this.reason = reason;
	}

	/**
	 * The responses of one service, one per reason.
	 * @param serviceId the service
	 * @return every reason's response
	 */
	static Map<NoInstanceReason, NoInstanceResponse> allFor(String serviceId) {
		Objects.requireNonNull(serviceId, "serviceId");
		Map<NoInstanceReason, NoInstanceResponse> responses = new EnumMap<>(NoInstanceReason.class);
		for (NoInstanceReason reason : NoInstanceReason.values()) {
			responses.put(reason, new NoInstanceResponse(serviceId, reason));
		}
		return responses;
	}

	/**
	 * The service that had no instance.
	 * @return the service id
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
	 * The error a caller should see for this response: it names the service and the
	 * reason, and has no cause (an empty response is an answer, not a failure of
	 * something else).
	 * @return a new exception, never {@code null}
	 */
	public NoInstanceAvailableException toException() {
		return new NoInstanceAvailableException(this.serviceId, this.reason, null);
	}

	@Override
	public String toString() {
		return "NoInstanceResponse[service=" + this.serviceId + ", reason=" + this.reason + ']';
	}

}
