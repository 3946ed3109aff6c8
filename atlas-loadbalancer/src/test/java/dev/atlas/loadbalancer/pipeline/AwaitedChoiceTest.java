package dev.atlas.loadbalancer.pipeline;

import java.time.Duration;
import java.util.Map;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Response;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Waiting for a choice on the calling thread gives what {@code Mono.block()} gives: the
 * response, at once or when it arrives; the error; {@code null} for an empty
 * {@code Mono}; and the calling thread's routing context in the subscriber's context.
 */
class AwaitedChoiceTest {

	private static final Response<ServiceInstance> RESPONSE = new DefaultResponse(
			new DefaultServiceInstance("users-1", "users", "10.0.0.1", 8080, false));

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	@Test
	void aResponseAtHandIsReturnedWithoutWaiting() {
		assertThat(AwaitedChoice.await(Mono.just(RESPONSE))).isSameAs(RESPONSE);
	}

	@Test
	void aResponseThatArrivesOnAnotherThreadIsWaitedFor() {
		assertThat(AwaitedChoice.await(Mono.just(RESPONSE).delayElement(Duration.ofMillis(50)))).isSameAs(RESPONSE);
	}

	@Test
	void anErrorIsThrown() {
		assertThatIllegalStateException()
			.isThrownBy(() -> AwaitedChoice.await(Mono.error(new IllegalStateException("chain failed"))))
			.withMessage("chain failed");
	}

	@Test
	void anEmptyChoiceIsNull() {
		assertThat(AwaitedChoice.await(Mono.empty())).isNull();
	}

	@Test
	void theCallingThreadsRoutingContextIsInTheSubscribersContext() {
		RoutingContext routing = RoutingContext.of(Map.of("x-service-version", "v2"));
		RoutingContextHolder.set(routing);
		Object[] seen = new Object[1];

		AwaitedChoice.await(Mono.deferContextual((context) -> {
			seen[0] = context.getOrDefault(RoutingContextHolder.KEY, null);
			return Mono.just(RESPONSE);
		}).delayElement(Duration.ofMillis(10)));

		assertThat(seen[0]).isSameAs(routing);
	}

}
