package dev.atlas.sample.order;

import java.io.IOException;

import org.springframework.core.Ordered;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * The application's own RestTemplate interceptor: adds {@code X-Caller: order-service} to
 * every call. It is ordered first, before Spring Cloud's load-balancer interceptor, which
 * is the set-up of a known failure: an interceptor that runs before the balancer must not
 * hide the gray tag from the routing decision (Atlas writes {@code X-Service-Version}
 * only after the choice, and decides from the propagated routing context).
 */
public class CallerInterceptor implements ClientHttpRequestInterceptor, Ordered {

	/** The header it sets. */
	public static final String HEADER = "X-Caller";

	/** The value it sets. */
	public static final String CALLER = "order-service";

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		request.getHeaders().set(HEADER, CALLER);
		return execution.execute(request, body);
	}

	/**
	 * @return {@link Ordered#HIGHEST_PRECEDENCE}: first of the RestTemplate's
	 * interceptors
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
