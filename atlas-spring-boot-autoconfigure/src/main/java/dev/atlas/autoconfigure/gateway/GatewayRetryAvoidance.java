package dev.atlas.autoconfigure.gateway;

import java.util.Map;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.core.Ordered;

/**
 * On a retry by Spring Cloud Gateway's {@code Retry} filter, leaves out the instance that
 * the previous attempt of the same exchange went to, as {@link RetryAvoidance} does for
 * the load-balanced clients.
 *
 * <p>
 * Why a filter of its own: the gateway never says that a choice is a retry. Its
 * {@code Retry} filter re-subscribes to the rest of the filter chain, so the
 * {@code ReactiveLoadBalancerClientFilter} runs again and asks the balancer afresh, but
 * with a plain {@link RequestDataContext}, not a {@link RetryableRequestContext} naming
 * the failed instance. That context's {@link RequestData#getAttributes() attributes} are
 * the exchange's own attribute map, though (not a copy), and the gateway keeps the
 * previous choice there, under {@value #LOAD_BALANCER_RESPONSE_ATTRIBUTE}: it puts it
 * there after each choice and nothing removes it before the retry. This filter reads that
 * attribute. On a first attempt it is absent and the candidates pass unchanged.
 *
 * <p>
 * The previous instance is matched by id, host and port and left out only when others
 * remain ({@link RetryAvoidance#avoid}); an instance of another service (an exchange that
 * a filter sent to a second service) matches nothing. A client's own
 * {@link RetryableRequestContext} is left to {@link RetryAvoidance}.
 *
 * <p>
 * Stateless but for {@link RetryAvoidance}'s memo of the reduced candidates, and
 * thread-safe; a request costs a type check and one map lookup.
 *
 * @since 0.1.0
 */
public final class GatewayRetryAvoidance implements CandidateFilter, Ordered {

	/**
	 * The exchange attribute under which Spring Cloud Gateway keeps the load balancer's
	 * last {@link Response}
	 * ({@code ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR}), spelled out so
	 * that Atlas does not depend on the gateway.
	 */
	public static final String LOAD_BALANCER_RESPONSE_ATTRIBUTE = "org.springframework.cloud.gateway.support.ServerWebExchangeUtils.gatewayLoadBalancerResponse";

	/**
	 * The exchange attribute under which Atlas's gateway filter keeps the previous
	 * attempt's {@link Response} during a retry (it takes it from
	 * {@link #LOAD_BALANCER_RESPONSE_ATTRIBUTE}, which Spring Cloud's filter would
	 * otherwise complete a second time when the retry finds no instance).
	 */
	public static final String PREVIOUS_RESPONSE_ATTRIBUTE = GatewayRetryAvoidance.class.getName()
			+ ".previousResponse";

	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		return RetryAvoidance.avoid(candidates, previous(request.request()));
	}

	/**
	 * The instance that the previous attempt of a gateway exchange went to.
	 * @param request the load-balancing request, or {@code null}
	 * @return that instance, or {@code null} on a first attempt, for a request that is
	 * not the gateway's, or for a client's retry (which {@link RetryAvoidance} handles)
	 */
	static @Nullable ServiceInstance previous(@Nullable Request<?> request) {
		if (request == null || !(request.getContext() instanceof RequestDataContext context)
				|| context instanceof RetryableRequestContext) {
			return null;
		}
		RequestData data = context.getClientRequest();
		Map<String, Object> attributes = (data != null) ? data.getAttributes() : null;
		Object previous = null;
		if (attributes != null) {
			previous = attributes.get(PREVIOUS_RESPONSE_ATTRIBUTE);
			if (previous == null) {
				previous = attributes.get(LOAD_BALANCER_RESPONSE_ATTRIBUTE);
			}
		}
		return (previous instanceof Response<?> response && response.getServer() instanceof ServiceInstance instance)
				? instance : null;
	}

	/**
	 * Runs at {@link CandidateFilter#RETRY_AVOIDANCE_ORDER}, after the built-in filters
	 * but for {@link RetryAvoidance} (which the stage moves last), so that it sees the
	 * final candidates.
	 * @return {@value CandidateFilter#RETRY_AVOIDANCE_ORDER}
	 */
	@Override
	public int getOrder() {
		return RETRY_AVOIDANCE_ORDER;
	}

}
