package dev.atlas.autoconfigure.nacos;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.WhoApp;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static org.awaitility.Awaitility.await;

/**
 * Real Spring Boot applications on random ports, registered in a real Nacos server (the
 * one at {@value #ADDRESS_VARIABLE}, shared with other tests, so every test uses its own
 * {@link #service service names}), for the integration tests; and the server's open HTTP
 * API, to change an instance from outside ({@link #updateInstance}) and to ask what the
 * server lists ({@link #listedPorts}).
 *
 * <p>
 * The tests that use it run only when {@value #ADDRESS_VARIABLE} is set. Changing an
 * instance needs Nacos 3's admin API ({@code PUT /nacos/v3/admin/ns/instance}; the v1
 * {@code PUT /nacos/v1/ns/instance} answers 410 Gone unless the server enables
 * {@code nacos.core.api.compatibility.admin.enabled}), which requires authentication when
 * the server has {@code nacos.core.auth.admin.enabled=true} (the default), even with
 * {@code nacos.core.auth.enabled=false}. Give it as {@value #IDENTITY_VARIABLE}
 * ({@code key:value}, the server's {@code nacos.core.auth.server.identity.key/value}) or
 * as {@value #USERNAME_VARIABLE} and {@value #PASSWORD_VARIABLE} (a user allowed to
 * write; logs in once).
 *
 * <p>
 * Closes the applications it started and the forwarders it made. Not thread-safe (one
 * test thread); {@link #updateInstance} and {@link #listedPorts} may be called from any
 * thread.
 */
final class NacosApps implements AutoCloseable {

	/**
	 * Environment variable with {@code host:port} of the Nacos server to test against.
	 */
	static final String ADDRESS_VARIABLE = "ATLAS_NACOS_ADDR";

	/** Environment variable with the server identity header, {@code key:value}. */
	static final String IDENTITY_VARIABLE = "ATLAS_NACOS_IDENTITY";

	/** Environment variable with the user name for the admin API. */
	static final String USERNAME_VARIABLE = "ATLAS_NACOS_USERNAME";

	/** Environment variable with that user's password. */
	static final String PASSWORD_VARIABLE = "ATLAS_NACOS_PASSWORD";

	/** Why the tests are skipped without a server. */
	static final String SKIPPED = "no Nacos server given: set ATLAS_NACOS_ADDR=host:port of a Nacos 3 server to run";

	static {
		// The Nacos client logs into ~/logs/nacos/*.log by default; have it use the
		// test's logging instead, so that its reconnects show in the test output.
		System.setProperty("nacos.logging.default.config.enabled", "false");
	}

	private static final JsonMapper json = JsonMapper.builder().build();

	private final String address;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

	private final List<TcpForwarder> forwarders = new ArrayList<>();

	private volatile @Nullable String accessToken;

	/**
	 * Reads the server address from {@value #ADDRESS_VARIABLE}.
	 * @throws IllegalStateException if it is not set
	 */
	NacosApps() {
		String address = System.getenv(ADDRESS_VARIABLE);
		if (address == null || address.isBlank()) {
			throw new IllegalStateException(SKIPPED);
		}
		this.address = address.trim();
	}

	/**
	 * The Nacos server's address.
	 * @return {@code host:port}
	 */
	String address() {
		return this.address;
	}

	/**
	 * A service name no other test (run) uses.
	 * @param prefix what the name says
	 * @return {@code prefix} and a random suffix
	 */
	static String service(String prefix) {
		return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
	}

	/**
	 * Starts an application registered in the Nacos server.
	 * @param name {@code spring.application.name}, the service it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the running application, closed by {@link #close()}
	 * @see #start(TcpForwarder, String, String...)
	 */
	ConfigurableApplicationContext start(String name, String... properties) {
		return run(this.address, name, properties);
	}

	/**
	 * Starts an application registered in the Nacos server through a forwarder.
	 * @param registry the forwarder whose address the application is given
	 * @param name {@code spring.application.name}, the service it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the running application, closed by {@link #close()}
	 */
	ConfigurableApplicationContext start(TcpForwarder registry, String name, String... properties) {
		return run(registry.address(), name, properties);
	}

	/**
	 * Starts a {@link WhoApp} registered in a Nacos server: random port, host
	 * {@code 127.0.0.1}, ZooKeeper off, no banner, no drain on shutdown (tests close many
	 * applications), then {@code properties}.
	 * @param serverAddress the Nacos address it is given
	 * @param name {@code spring.application.name}, the service it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the running application, closed by {@link #close()}
	 */
	private ConfigurableApplicationContext run(String serverAddress, String name, String... properties) {
		ConfigurableApplicationContext app = new SpringApplicationBuilder(WhoApp.class)
			.properties("spring.application.name=" + name, "server.port=0",
					"spring.cloud.nacos.discovery.server-addr=" + serverAddress,
					"spring.cloud.nacos.discovery.ip=127.0.0.1", "spring.cloud.zookeeper.enabled=false",
					"spring.cloud.zookeeper.discovery.enabled=false", "spring.main.banner-mode=off",
					"atlas.lifecycle.drain=0s")
			.properties(properties)
			.run();
		this.apps.add(app);
		return app;
	}

	/**
	 * A forwarder to the Nacos server ({@link TcpForwarder#nacos}), closed by
	 * {@link #close()} after the applications.
	 * @param up whether it accepts connections from the start
	 * @return the forwarder
	 * @throws IOException if no free ports were found
	 */
	TcpForwarder forwarder(boolean up) throws IOException {
		TcpForwarder forwarder = TcpForwarder.nacos(this.address, up);
		this.forwarders.add(forwarder);
		return forwarder;
	}

	/**
	 * The port an application listens on.
	 * @param app a running web application
	 * @return the port
	 */
	static int port(ConfigurableApplicationContext app) {
		return ((WebServerApplicationContext) app).getWebServer().getPort();
	}

	/**
	 * Calls {@code app.target}'s {@code /who} from an application, through its
	 * load-balanced {@code RestClient}, a number of times.
	 * @param caller the calling application
	 * @param times how many calls
	 * @return how many calls each port served
	 */
	static Map<Integer, Integer> calls(ConfigurableApplicationContext caller, int times) {
		WhoApp client = caller.getBean(WhoApp.class);
		Map<Integer, Integer> byPort = new HashMap<>();
		for (int i = 0; i < times; i++) {
			byPort.merge(Integer.parseInt(client.call()), 1, Integer::sum);
		}
		return byPort;
	}

	/**
	 * Waits (up to 20 s) until an application's discovery client lists a number of
	 * instances of a service.
	 * @param caller the application
	 * @param serviceId the service
	 * @param count the number of instances to wait for
	 */
	static void awaitInstances(ConfigurableApplicationContext caller, String serviceId, int count) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> caller.getBean(DiscoveryClient.class).getInstances(serviceId).size() == count);
	}

	/**
	 * The ports of the instances of a service the server lists, through the open client
	 * API {@code GET /nacos/v3/client/ns/instance/list} (no authentication; it leaves out
	 * instances with {@code enabled=false}).
	 * @param serviceId the service, in {@code DEFAULT_GROUP} of the public namespace
	 * @return their ports, in the server's order
	 */
	List<Integer> listedPorts(String serviceId) {
		JsonNode answer = send(
				HttpRequest.newBuilder(uri("/nacos/v3/client/ns/instance/list", Map.of("serviceName", serviceId)))
					.GET(),
				false);
		List<Integer> ports = new ArrayList<>();
		answer.path("data").forEach((instance) -> ports.add(instance.path("port").asInt()));
		return ports;
	}

	/**
	 * Changes an ephemeral instance on {@code 127.0.0.1} through the admin API
	 * {@code PUT /nacos/v3/admin/ns/instance}. Nacos keeps what this call sets next to
	 * what the instance registered, and each call replaces what the previous one set: the
	 * weight and {@code enabled} given here win, and {@code metadata} is laid over the
	 * registered metadata (a key set by an earlier call and missing here goes away).
	 * @param serviceId the service
	 * @param port the instance's port
	 * @param weight its weight, 0 to 10000
	 * @param enabled whether callers may choose it
	 * @param metadata metadata to lay over the registered metadata
	 */
	void updateInstance(String serviceId, int port, double weight, boolean enabled, Map<String, String> metadata) {
		Map<String, String> form = new LinkedHashMap<>();
		form.put("serviceName", serviceId);
		form.put("ip", "127.0.0.1");
		form.put("port", Integer.toString(port));
		form.put("ephemeral", "true");
		form.put("weight", Double.toString(weight));
		form.put("enabled", Boolean.toString(enabled));
		form.put("metadata", json.writeValueAsString(metadata));
		send(HttpRequest.newBuilder(uri("/nacos/v3/admin/ns/instance", form)).PUT(HttpRequest.BodyPublishers.noBody()),
				true);
	}

	private JsonNode send(HttpRequest.Builder request, boolean admin) {
		if (admin) {
			authenticate(request);
		}
		HttpRequest built = request.timeout(Duration.ofSeconds(5)).build();
		HttpResponse<String> response;
		try {
			response = this.http.send(built, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(built.method() + " " + built.uri() + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		if (admin && (response.statusCode() == 401 || response.statusCode() == 403)) {
			throw new IllegalStateException(built.method() + " " + built.uri() + " answered " + response.statusCode()
					+ ": the Nacos admin API needs authentication; set " + IDENTITY_VARIABLE + "=key:value (the "
					+ "server's nacos.core.auth.server.identity.key/value) or " + USERNAME_VARIABLE + " and "
					+ PASSWORD_VARIABLE + ". Answer: " + response.body());
		}
		JsonNode body = (response.statusCode() == 200) ? json.readTree(response.body()) : null;
		if (body == null || body.path("code").asInt(-1) != 0) {
			throw new IllegalStateException(
					built.method() + " " + built.uri() + " answered " + response.statusCode() + ": " + response.body());
		}
		return body;
	}

	private void authenticate(HttpRequest.Builder request) {
		String identity = System.getenv(IDENTITY_VARIABLE);
		if (identity != null && identity.contains(":")) {
			int colon = identity.indexOf(':');
			request.header(identity.substring(0, colon), identity.substring(colon + 1));
			return;
		}
		String username = System.getenv(USERNAME_VARIABLE);
		if (username != null) {
			String token = this.accessToken;
			if (token == null) {
				String password = System.getenv(PASSWORD_VARIABLE);
				HttpRequest login = HttpRequest.newBuilder(uri("/nacos/v3/auth/user/login", Map.of()))
					.header("Content-Type", "application/x-www-form-urlencoded")
					.POST(HttpRequest.BodyPublishers
						.ofString(query(Map.of("username", username, "password", (password != null) ? password : ""))))
					.timeout(Duration.ofSeconds(5))
					.build();
				try {
					String answer = this.http.send(login, HttpResponse.BodyHandlers.ofString()).body();
					token = json.readTree(answer).path("accessToken").asString();
				}
				catch (IOException ex) {
					throw new IllegalStateException("Nacos login failed", ex);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				this.accessToken = token;
			}
			request.header("accessToken", token);
		}
	}

	private URI uri(String path, Map<String, String> query) {
		return URI.create("http://" + this.address + path + (query.isEmpty() ? "" : "?" + query(query)));
	}

	private static String query(Map<String, String> parameters) {
		return parameters.entrySet()
			.stream()
			.map((entry) -> URLEncoder.encode(entry.getKey(), StandardCharsets.UTF_8) + "="
					+ URLEncoder.encode(entry.getValue(), StandardCharsets.UTF_8))
			.collect(Collectors.joining("&"));
	}

	@Override
	public void close() {
		for (int i = this.apps.size() - 1; i >= 0; i--) {
			this.apps.get(i).close();
		}
		this.forwarders.forEach(TcpForwarder::close);
	}

}
