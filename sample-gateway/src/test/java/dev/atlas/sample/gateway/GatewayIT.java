package dev.atlas.sample.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.sample.registry.EmbeddedRegistry;
import dev.atlas.sample.user.UserServiceApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Atlas behind Spring Cloud Gateway, with real applications on the in-process ZooKeeper:
 * two untagged user-services and one tagged {@code v2}, the sample gateway routing
 * {@code /api/users/**} to {@code lb://user-service}. A request that names {@code v2} in
 * {@code X-Service-Version} goes to the {@code v2} instance; one that names no tag never
 * does (baseline isolation).
 */
class GatewayIT {

	private static EmbeddedRegistry registry;

	private static final List<ConfigurableApplicationContext> apps = new ArrayList<>();

	private static RestClient gateway;

	@BeforeAll
	static void start() throws Exception {
		registry = EmbeddedRegistry.start(0);
		// the gateway's classes are on this JVM's class path: the user-services leave it
		// off
		for (String tag : List.of("", "", "v2")) {
			apps.add(run(UserServiceApplication.application().build(),
					"--spring.cloud.gateway.server.webflux.enabled=false", "--management.server.port=0",
					"--sample.tag=" + tag));
		}
		// Spring MVC is on this JVM's class path (the user-services): the gateway's check
		// that
		// refuses to start beside it is left out here, the gateway runs reactive all the
		// same
		ConfigurableApplicationContext edge = run(GatewayApplication.application().build(),
				"--spring.autoconfigure.exclude="
						+ "org.springframework.cloud.gateway.config.GatewayClassPathWarningAutoConfiguration");
		apps.add(edge);
		DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
		await().atMost(Duration.ofSeconds(30)).until(() -> discovery.getInstances("user-service").size() == 3);
		gateway = RestClient
			.create("http://127.0.0.1:" + ((WebServerApplicationContext) edge).getWebServer().getPort());
	}

	private static ConfigurableApplicationContext run(org.springframework.boot.SpringApplication application,
			String... extra) {
		// Spring MVC (the user-services) and the gateway share this JVM's class path: the
		// gateway's check that refuses to start beside Spring MVC is left out here (the
		// gateway runs reactive all the same: gateway.yml says so)
		List<String> args = new ArrayList<>(List.of(
				"--spring.autoconfigure.exclude="
						+ "org.springframework.cloud.gateway.config.GatewayClassPathWarningAutoConfiguration",
				"--server.port=0", "--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
				"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s", "--atlas.warmup.enabled=false"));
		args.addAll(List.of(extra));
		return application.run(args.toArray(String[]::new));
	}

	@AfterAll
	static void stop() throws Exception {
		for (int i = apps.size() - 1; i >= 0; i--) {
			apps.get(i).close();
		}
		if (registry != null) {
			registry.close();
		}
	}

	@SuppressWarnings("unchecked")
	private static String tagOf(@org.jspecify.annotations.Nullable String version) {
		RestClient.RequestHeadersSpec<?> request = gateway.get().uri("/api/users/1");
		if (version != null) {
			request = request.header("X-Service-Version", version);
		}
		Map<String, Object> user = request.retrieve().body(new ParameterizedTypeReference<Map<String, Object>>() {
		});
		Object tag = ((Map<String, Object>) user.get("servedBy")).get("tag");
		return String.valueOf(tag);
	}

	@Test
	void theGatewayRoutesEachRequestToItsLane() {
		for (int i = 0; i < 20; i++) {
			assertThat(tagOf("v2")).as("X-Service-Version: v2").isEqualTo("v2");
			assertThat(tagOf(null)).as("no tag: baseline").isNotEqualTo("v2");
		}
	}

}
