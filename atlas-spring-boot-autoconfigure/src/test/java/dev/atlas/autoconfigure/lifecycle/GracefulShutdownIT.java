package dev.atlas.autoconfigure.lifecycle;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Field case C12 against a real ZooKeeper (in-process) and a real Spring Boot
 * application.
 */
@ExtendWith(OutputCaptureExtension.class)
class GracefulShutdownIT {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private TestingServer zookeeper;

	private CuratorFramework curator;

	private ConfigurableApplicationContext app;

	private int port;

	@BeforeEach
	void registry() throws Exception {
		this.zookeeper = new TestingServer(true);
		this.curator = CuratorFrameworkFactory.newClient(this.zookeeper.getConnectString(), new RetryOneTime(100));
		this.curator.start();
		this.curator.blockUntilConnected(10, TimeUnit.SECONDS);
	}

	@AfterEach
	void close() throws IOException {
		if (this.app != null) {
			this.app.close();
		}
		this.curator.close();
		this.zookeeper.close();
	}

	private void start(String... properties) throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			this.port = socket.getLocalPort();
		}
		this.app = new SpringApplicationBuilder(App.class)
			.properties("spring.application.name=draining-app", "server.port=" + this.port,
					"spring.cloud.zookeeper.connect-string=" + this.zookeeper.getConnectString(),
					"spring.cloud.zookeeper.discovery.instance-host=127.0.0.1",
					"spring.cloud.loadbalancer.enabled=false", "spring.cloud.nacos.discovery.enabled=false",
					"spring.main.banner-mode=off", "management.endpoints.web.exposure.include=health,prestop",
					"management.endpoint.health.probes.enabled=true", "atlas.lifecycle.drain=3s")
			.properties(properties)
			.run();
		await().atMost(Duration.ofSeconds(5)).until(() -> registered().size() == 1);
	}

	private List<String> registered() throws Exception {
		String path = "/services/draining-app";
		return (this.curator.checkExists().forPath(path) == null) ? List.of()
				: this.curator.getChildren().forPath(path);
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private double drains() {
		return this.app.getBean(MeterRegistry.class).timer("atlas.lifecycle.drain").count();
	}

	@Test
	void case12_deregistersFirstServesWhileDrainingAndTheRegistryClientClosesLast() throws Exception {
		start();
		CuratorFramework client = this.app.getBean(CuratorFramework.class);
		ConfigurableApplicationContext closing = this.app;
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		// t=0: deregistered at once...
		await().atMost(Duration.ofSeconds(1)).until(() -> registered().isEmpty());
		// ...refusing traffic for health checks, yet still serving requests, with the
		// registry client open.
		assertThat(get("/actuator/health/readiness").body()).contains("OUT_OF_SERVICE");
		assertThat(get("/ping").body()).isEqualTo("pong");
		assertThat(shutdown).isNotDone();
		assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		shutdown.get(30, TimeUnit.SECONDS);
		assertThat(client.getState()).as("registry client closed last").isEqualTo(CuratorFrameworkState.STOPPED);
		this.app = null;
	}

	@Test
	void case12_preStopTwiceIsTheSameAsOnce() throws Exception {
		start("atlas.lifecycle.drain=1s");
		CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> call("/actuator/prestop"));
		CompletableFuture<HttpResponse<String>> second = CompletableFuture.supplyAsync(() -> call("/actuator/prestop"));
		String bodies = first.get(30, TimeUnit.SECONDS).body() + second.get(30, TimeUnit.SECONDS).body();
		assertThat(bodies).contains("\"started\":true").contains("\"started\":false");
		assertThat(registered()).isEmpty();
		assertThat(drains()).isEqualTo(1);
		// SIGTERM after preStop: no second drain.
		MeterRegistry meters = this.app.getBean(MeterRegistry.class);
		this.app.close();
		assertThat(meters.timer("atlas.lifecycle.drain").count()).isEqualTo(1);
		this.app = null;
	}

	@Test
	void case12_unreachableRegistryLogsOneErrorAndDoesNotDelayShutdownPastTheTimeout(CapturedOutput output)
			throws Exception {
		start("atlas.lifecycle.drain=0s", "atlas.lifecycle.deregister-timeout=1s");
		this.zookeeper.stop();
		ConfigurableApplicationContext closing = this.app;
		this.app = null;
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		// Deregistration gives up after 1 s; the rest of the shutdown must not hang on
		// the registry.
		await().atMost(Duration.ofSeconds(15)).until(shutdown::isDone);
		assertThat(output.getOut().lines().filter((line) -> line.contains("did not confirm deregistration")))
			.hasSize(1);
	}

	@Test
	void oneDrainAndOneDeregistrationWithSeveralFeignClients(CapturedOutput output) throws Exception {
		start("atlas.lifecycle.drain=1s", "spring.cloud.loadbalancer.enabled=true");
		// Both Feign clients and their load-balancer contexts exist: each is a child
		// context that publishes
		// its own ContextClosedEvent on shutdown.
		assertThat(this.app.getBean(PingClient.class).ping()).isEqualTo("pong");
		assertThat(this.app.getBean(PongClient.class).ping()).isEqualTo("pong");
		MeterRegistry meters = this.app.getBean(MeterRegistry.class);
		this.app.close();
		this.app = null;
		assertThat(meters.timer("atlas.lifecycle.drain").count()).isEqualTo(1);
		assertThat(output.getOut().lines().filter((line) -> line.contains("Shutdown: deregistering"))).hasSize(1);
		assertThat(output.getOut().lines().filter((line) -> line.contains("Spring Cloud Alibaba"))).isEmpty();
		assertThat(registered()).isEmpty();
	}

	private HttpResponse<String> call(String path) {
		try {
			return get(path);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@FeignClient(name = "draining-app", contextId = "ping")
	interface PingClient {

		@GetMapping("/ping")
		String ping();

	}

	@FeignClient(name = "draining-app", contextId = "pong")
	interface PongClient {

		@GetMapping("/ping")
		String ping();

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableFeignClients(clients = { PingClient.class, PongClient.class })
	@RestController
	static class App {

		@GetMapping("/ping")
		String ping() {
			return "pong";
		}

	}

}
