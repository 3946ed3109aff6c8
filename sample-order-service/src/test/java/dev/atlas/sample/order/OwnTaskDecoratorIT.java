package dev.atlas.sample.order;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.sample.order.ChainService.Chain;
import dev.atlas.sample.user.UserServiceApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gray tag reaches an {@code @Async} Feign hop also when the application declares a
 * {@link TaskDecorator} of its own — here the common one that copies the logging MDC to
 * {@code @Async} threads. Spring Boot composes every {@code TaskDecorator} bean into its
 * {@code applicationTaskExecutor}; Atlas's context-propagating decorator must stay among
 * them (it once backed off for any {@code TaskDecorator}, and the gray header was lost on
 * the async hop).
 */
class OwnTaskDecoratorIT {

	static SampleFleet fleet;

	static ConfigurableApplicationContext orders;

	@BeforeAll
	static void startFleet() throws Exception {
		fleet = new SampleFleet();
		List<ConfigurableApplicationContext> callers = new ArrayList<>();
		for (String tag : List.of("v1", "v2")) {
			callers.add(fleet.start(UserServiceApplication.application(), "--sample.tag=" + tag,
					"--atlas.gray.baseline-tags=v1"));
		}
		orders = fleet.start(OrderServiceApplication.application().sources(MdcTaskDecoratorConfiguration.class),
				"--atlas.gray.baseline-tags=v1");
		callers.add(orders);
		for (ConfigurableApplicationContext caller : callers) {
			SampleFleet.awaitUserServices(caller, "every caller discovers both user-service instances", 2);
		}
	}

	@AfterAll
	static void stopFleet() throws Exception {
		if (fleet != null) {
			fleet.close();
		}
	}

	@Test
	void grayHeaderReachesAsyncFeignWhenTheApplicationHasItsOwnTaskDecorator() {
		int port = ((WebServerApplicationContext) orders).getWebServer().getPort();
		RestClient http = RestClient.builder()
			.baseUrl("http://127.0.0.1:" + port)
			.requestFactory(new SimpleClientHttpRequestFactory())
			.build();
		for (int i = 0; i < 10; i++) {
			Chain chain = http.get()
				.uri("/chain/{id}", i)
				.header("X-Service-Version", "v2")
				.retrieve()
				.body(Chain.class);

			assertThat(chain.hop1().tag()).as("hop 1 (Feign from @Async): %s", chain).isEqualTo("v2");
			assertThat(chain.hop1().received().version()).isEqualTo("v2");
			assertThat(chain.hop2().tag()).as("hop 2: %s", chain).isEqualTo("v2");
		}
	}

	/**
	 * The application's own decorator: copies the logging MDC to {@code @Async} threads.
	 */
	@Configuration(proxyBeanMethods = false)
	static class MdcTaskDecoratorConfiguration {

		@Bean
		TaskDecorator mdcTaskDecorator() {
			return (runnable) -> {
				Map<String, String> mdc = MDC.getCopyOfContextMap();
				return () -> {
					Map<String, String> previous = MDC.getCopyOfContextMap();
					setMdc(mdc);
					try {
						runnable.run();
					}
					finally {
						setMdc(previous);
					}
				};
			};
		}

		private static void setMdc(Map<String, String> values) {
			if (values != null) {
				MDC.setContextMap(values);
			}
			else {
				MDC.clear();
			}
		}

	}

}
