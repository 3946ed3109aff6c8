package dev.atlas.sample.order;

import java.net.UnknownHostException;

import feign.FeignException;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * Answers 503 when user-service is unavailable to this caller — the balancer had no
 * instance for the request (e.g. {@code atlas.gray.fallback=none} and a tag nobody runs)
 * or user-service itself answered 503 — whichever client made the call. Each client
 * reports it differently: RestTemplate and RestClient throw Spring Cloud's
 * {@code IllegalStateException("No instances
 * available for …")}, Feign a {@link FeignException} with status 503, WebClient a
 * {@link WebClientResponseException} with status 503. With spring-retry on the classpath
 * (this sample has it: failed GETs are retried on another instance), Spring Cloud's
 * retrying clients report "no instance" differently again: RestTemplate and RestClient
 * throw
 * {@code IllegalArgumentException("Service Instance cannot be null, serviceId: …")}, and
 * Feign sends the request to the unresolved service id, which fails with an
 * {@link UnknownHostException} naming the service.
 */
@RestControllerAdvice
public class UpstreamErrors {

	/**
	 * @param ex any failure of a handler
	 * @return a 503 problem when user-service was unavailable
	 * @throws RuntimeException {@code ex} itself otherwise
	 */
	@ExceptionHandler(RuntimeException.class)
	public ProblemDetail unavailable(RuntimeException ex) {
		if (!isUnavailable(ex)) {
			throw ex;
		}
		return ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
				"user-service unavailable: " + ex.getMessage());
	}

	static boolean isUnavailable(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof IllegalStateException && cause.getMessage() != null
					&& cause.getMessage().startsWith("No instances available for")) {
				return true;
			}
			if (cause instanceof IllegalArgumentException && cause.getMessage() != null
					&& cause.getMessage().startsWith("Service Instance cannot be null")) {
				return true;
			}
			if (cause instanceof UnknownHostException && TrafficService.USER_SERVICE.equals(cause.getMessage())) {
				return true;
			}
			if ((cause instanceof FeignException feign && feign.status() == 503)
					|| (cause instanceof WebClientResponseException web && web.getStatusCode().value() == 503)
					|| (cause instanceof RestClientResponseException rest && rest.getStatusCode().value() == 503)) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

}
