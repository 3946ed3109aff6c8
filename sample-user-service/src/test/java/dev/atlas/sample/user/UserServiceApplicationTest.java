package dev.atlas.sample.user;

import java.time.Duration;
import java.util.Map;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the real application (its own {@code user-service.yml}, both discovery starters
 * on the classpath, registration off) and asks who served a call; with
 * {@code sample.delay}, how long it took.
 */
class UserServiceApplicationTest {

	@Test
	void answersWithItsOwnIdentity() {
		try (ConfigurableApplicationContext context = UserServiceApplication.application()
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.cloud.zookeeper.enabled=false",
					"--sample.weight=3", "--sample.tag=v2", "--sample.cluster=hz")) {

			// read from user-service.yml, not application.yml
			assertThat(context.getEnvironment().getProperty("spring.application.name")).isEqualTo("user-service");
			assertThat(context.getEnvironment().getProperty("spring.cloud.nacos.discovery.enabled")).isEqualTo("false");
			assertThat(context.getBean(SampleProperties.class).delay()).isZero();

			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			RestClient http = RestClient.create("http://127.0.0.1:" + port);
			Map<String, Object> user = http.get().uri("/users/42").retrieve().body(new ParameterizedTypeReference<>() {
			});

			assertThat(user).containsEntry("id", 42).containsEntry("name", "user-42");
			assertThat(user.get("servedBy")).asInstanceOf(InstanceOfAssertFactories.MAP)
				.containsEntry("host", "127.0.0.1")
				.containsEntry("port", port)
				.containsEntry("tag", "v2")
				.containsEntry("cluster", "hz")
				.containsEntry("weight", 3.0)
				.hasEntrySatisfying("instanceId", (id) -> assertThat((String) id).startsWith("user-service-"));
			// the actuator answers on the management port only, never on the
			// application's
			int managementPort = context.getEnvironment().getRequiredProperty("local.management.port", Integer.class);
			assertThat(managementPort).isNotEqualTo(port);
			RestClient management = RestClient.create("http://127.0.0.1:" + managementPort);
			assertThat(management.get().uri("/actuator/health/readiness").retrieve().body(String.class)).contains("UP");
			Integer status = http.get()
				.uri("/actuator/prestop")
				.exchange((request, response) -> response.getStatusCode().value());
			assertThat(status).isEqualTo(404);
		}
	}

	@Test
	void sampleDelayDelaysEveryAnswerOfTheUserEndpoint() {
		Duration delay = Duration.ofMillis(400);
		try (ConfigurableApplicationContext context = UserServiceApplication.application()
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.cloud.zookeeper.enabled=false",
					"--sample.delay=400ms")) {
			assertThat(context.getBean(SampleProperties.class).delay()).isEqualTo(delay);
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			RestClient http = RestClient.create("http://127.0.0.1:" + port);
			// Each answer, not only the first: the delay is a lower bound of every call
			// (a sleep never ends early); no upper bound, which a loaded machine could
			// break.
			for (int i = 0; i < 3; i++) {
				long start = System.nanoTime();
				Map<String, Object> user = http.get()
					.uri("/users/{id}", i)
					.retrieve()
					.body(new ParameterizedTypeReference<>() {
					});
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				assertThat(user).containsEntry("id", i);
				assertThat(took).as("call %d", i).isGreaterThanOrEqualTo(delay);
			}
		}
	}

}
