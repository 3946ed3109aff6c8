package dev.atlas.sample.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.atlas.sample.registry.EmbeddedRegistry;
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
 * two untagged user-services and one tagged {@code v2}, each in a JVM of its own from its
 * executable jar (a servlet application and the reactive gateway do not share one class
 * path), and the sample gateway in this JVM, routing {@code /api/users/**} to
 * {@code lb://user-service}. A request that names {@code v2} in {@code X-Service-Version}
 * goes to the {@code v2} instance; one that names no tag never does (baseline isolation).
 */
class GatewayIT {

	private static EmbeddedRegistry registry;

	private static final List<ForkedSample> providers = new ArrayList<>();

	private static ConfigurableApplicationContext edge;

	private static RestClient gateway;

	@BeforeAll
	static void start() throws Exception {
		registry = EmbeddedRegistry.start(0);
		for (String tag : List.of("", "", "v2")) {
			providers.add(ForkedSample.start("sample.user-service.jar", "user-service-" + providers.size(),
					List.of("--server.port=0", "--management.server.port=0",
							"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
							"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s", "--sample.tag=" + tag)));
		}
		edge = GatewayApplication.application()
			.run("--server.port=0", "--management.server.port=0",
					"--spring.cloud.zookeeper.connect-string=" + registry.connectString(),
					"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s", "--atlas.warmup.enabled=false");
		DiscoveryClient discovery = edge.getBean(DiscoveryClient.class);
		await().atMost(Duration.ofSeconds(90)).until(() -> discovery.getInstances("user-service").size() == 3);
		gateway = RestClient
			.create("http://127.0.0.1:" + ((WebServerApplicationContext) edge).getWebServer().getPort());
	}

	@AfterAll
	static void stop() throws Exception {
		if (edge != null) {
			edge.close();
		}
		for (ForkedSample provider : providers) {
			provider.close();
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
