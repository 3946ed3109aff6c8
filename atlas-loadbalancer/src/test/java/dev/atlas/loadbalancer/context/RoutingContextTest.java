package dev.atlas.loadbalancer.context;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A routing context answers a header by any case of its name, and the thread's holder
 * gives back what was set on the thread, and nothing on another thread.
 */
class RoutingContextTest {

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	@Test
	void aHeaderIsFoundByAnyCaseOfItsName() {
		RoutingContext context = RoutingContext.of(Map.of("X-Service-Version", " v2 "));

		assertThat(context.get("x-service-version")).isEqualTo("v2");
		assertThat(context.get("X-Service-Version")).isEqualTo("v2");
		assertThat(context.get("X-SERVICE-VERSION")).isEqualTo("v2");
		assertThat(context.get("x-user-group")).isNull();
		assertThat(context.get("X-User-Group")).isNull();
		assertThat(RoutingContext.EMPTY.get("x-service-version")).isNull();
	}

	@Test
	void theHolderGivesBackWhatWasSetOnThisThreadOnly() throws InterruptedException {
		RoutingContext context = RoutingContext.of(Map.of("x-service-version", "v2"));
		RoutingContextHolder.set(context);
		RoutingContext[] onOtherThread = { context };
		Thread other = new Thread(() -> onOtherThread[0] = RoutingContextHolder.get());
		other.start();
		other.join();

		assertThat(RoutingContextHolder.get()).isSameAs(context);
		assertThat(onOtherThread[0]).isNull();
		RoutingContextHolder.set(RoutingContext.EMPTY);
		assertThat(RoutingContextHolder.get()).isNull();
	}

}
