package dev.atlas.autoconfigure.observability;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Issue "Observability": real applications on a real (in-process) ZooKeeper; a caller
 * drives traffic to two providers (weights 1 and 3), then its
 * {@code /actuator/prometheus} and {@code /actuator/atlas} are read over HTTP.
 */
class ObservabilityIT {

	private static final ObjectMapper json = new ObjectMapper();

	private static final HttpClient http = HttpClient.newHttpClient();

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		app("provider", "weight=1");
		app("provider", "weight=3");
		caller = app("caller", "weight=1");
		ZooKeeperApps.awaitInstances(caller, "provider", 2);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static ConfigurableApplicationContext app(String name, String metadata) {
		return apps.start(WhoApp.class, name, "spring.cloud.zookeeper.discovery.metadata." + metadata,
				"management.endpoints.web.exposure.include=health,prometheus,atlas",
				// A long warmup keeps every young instance at the 10 % floor: effective
				// weights are exact.
				"atlas.warmup.duration=600s",
				// Spring Cloud's own loadbalancer.requests.* meters are opt-in (as
				// in Spring Cloud); switched on, they count beside Atlas's.
				"spring.cloud.loadbalancer.stats.micrometer.enabled=true");
	}

	private static String get(ConfigurableApplicationContext app, String path) throws Exception {
		int port = ZooKeeperApps.port(app);
		return http
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
					HttpResponse.BodyHandlers.ofString())
			.body();
	}

	@Test
	@SuppressWarnings("unchecked")
	void prometheusAndTheAtlasViewShowTheDecisions() throws Exception {
		for (int i = 0; i < 400; i++) {
			get(caller, "/call");
		}
		String prometheus = get(caller, "/actuator/prometheus");
		assertThat(prometheus).contains("atlas_picks_total{service=\"provider\",strategy=\"weighted-random\"} 400.0");
		assertThat(prometheus).contains("atlas_warmup_instances{service=\"provider\"} 2.0");
		assertThat(prometheus)
			.containsPattern("loadbalancer_requests_success_seconds_count\\{.*serviceId=\"provider\"");
		assertThat(prometheus).contains("atlas_gray_fallback_total{policy=\"baseline\",service=\"provider\"} 0.0");
		assertThat(prometheus).doesNotContainPattern("atlas_[a-z_]+\\{[^}]*instance=");

		JsonNode provider = json.readTree(get(caller, "/actuator/atlas/provider"));
		assertThat(provider.get("strategy").asText()).isEqualTo("weighted-random");
		assertThat(provider.get("stale").asBoolean()).isFalse();
		Map<Double, JsonNode> byWeight = new HashMap<>();
		provider.get("instances").forEach((node) -> byWeight.put(node.get("weight").asDouble(), node));
		assertThat(byWeight).containsOnlyKeys(1.0, 3.0);
		assertThat(byWeight.get(1.0).get("effectiveWeight").asDouble()).isCloseTo(0.1, within(1e-9));
		assertThat(byWeight.get(3.0).get("effectiveWeight").asDouble()).isCloseTo(0.3, within(1e-9));
		assertThat(byWeight.get(3.0).get("warmup").asDouble()).isCloseTo(0.1, within(1e-9));
		long picks = byWeight.get(1.0).get("picks").asLong() + byWeight.get(3.0).get("picks").asLong();
		assertThat(picks).isEqualTo(400);
		// 1 : 3 over 400 picks; sigma 2.2 points, tolerance 9 points.
		assertThat(byWeight.get(3.0).get("picks").asLong() / 400.0).isCloseTo(0.75, within(0.09));

		JsonNode all = json.readTree(get(caller, "/actuator/atlas"));
		assertThat(all.get("services").has("provider")).isTrue();
		JsonNode lifecycle = all.get("lifecycle");
		assertThat(lifecycle.get("registered").asBoolean()).isTrue();
		assertThat(lifecycle.get("registration").asText()).isEqualTo("LISTED");
		assertThat(lifecycle.get("listedAt").asLong()).isGreaterThanOrEqualTo(lifecycle.get("registeredAt").asLong());
		assertThat(lifecycle.get("registeredAt").asLong()).isPositive();
		assertThat(lifecycle.get("ready").asBoolean()).isTrue();
		assertThat(lifecycle.get("state").asText()).isEqualTo("SERVING");
		assertThat(get(caller, "/actuator/atlas/never-called")).isEmpty();
	}

}
