package dev.atlas.autoconfigure.lifecycle;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.atlas.autoconfigure.Ports;
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
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Graceful shutdown (deregister, serve while draining, registry client closed last)
 * against a real ZooKeeper (in-process) and a real Spring Boot application, its actuator
 * on a management port of its own; also that a delayed registration never happens once
 * shutdown began, and that an application that does not register itself still refuses
 * traffic, and drains on Kubernetes or preStop.
 */
@ExtendWith(OutputCaptureExtension.class)
class GracefulShutdownIT {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private TestingServer zookeeper;

	private CuratorFramework curator;

	private ConfigurableApplicationContext app;

	private int port;

	private int managementPort;

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
		startUnregistered(properties);
		await().atMost(Duration.ofSeconds(5)).until(() -> registered().size() == 1);
	}

	/** Starts the application without waiting for it to be registered. */
	private void startUnregistered(String... properties) throws IOException {
		this.port = Ports.free();
		this.app = new SpringApplicationBuilder(App.class)
			.properties("spring.application.name=draining-app", "server.port=" + this.port,
					"spring.cloud.zookeeper.connect-string=" + this.zookeeper.getConnectString(),
					"spring.cloud.zookeeper.discovery.instance-host=127.0.0.1",
					"spring.cloud.loadbalancer.enabled=false", "spring.cloud.nacos.discovery.enabled=false",
					"spring.main.banner-mode=off", "management.server.port=0",
					"management.endpoints.web.exposure.include=health,prestop",
					"management.endpoint.health.probes.enabled=true", "atlas.lifecycle.drain=3s")
			.properties(properties)
			.run();
		this.managementPort = this.app.getEnvironment().getRequiredProperty("local.management.port", Integer.class);
	}

	private List<String> registered() throws Exception {
		String path = "/services/draining-app";
		return (this.curator.checkExists().forPath(path) == null) ? List.of()
				: this.curator.getChildren().forPath(path);
	}

	/** A request to the application's port. */
	private HttpResponse<String> get(String path) throws Exception {
		return get(this.port, path);
	}

	/** A request to the management port. */
	private HttpResponse<String> management(String path) throws Exception {
		return get(this.managementPort, path);
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private double drains() {
		return this.app.getBean(MeterRegistry.class).timer("atlas.lifecycle.drain").count();
	}

	@Test
	void deregistersFirstServesWhileDrainingAndTheRegistryClientClosesLast() throws Exception {
		start();
		CuratorFramework client = this.app.getBean(CuratorFramework.class);
		ConfigurableApplicationContext closing = this.app;
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		// t=0: deregistered at once...
		await().atMost(Duration.ofSeconds(1)).until(() -> registered().isEmpty());
		// ...refusing traffic for health checks, yet still serving requests, with the
		// registry client open.
		assertThat(management("/actuator/health/readiness").body()).contains("OUT_OF_SERVICE");
		assertThat(get("/ping").body()).isEqualTo("pong");
		assertThat(shutdown).isNotDone();
		assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		shutdown.get(30, TimeUnit.SECONDS);
		assertThat(client.getState()).as("registry client closed last").isEqualTo(CuratorFrameworkState.STOPPED);
		this.app = null;
	}

	@Test
	void preStopTwiceIsTheSameAsOnce() throws Exception {
		start("atlas.lifecycle.drain=1s");
		CompletableFuture<HttpResponse<String>> first = CompletableFuture
			.supplyAsync(() -> call(this.managementPort, "/actuator/prestop"));
		CompletableFuture<HttpResponse<String>> second = CompletableFuture
			.supplyAsync(() -> call(this.managementPort, "/actuator/prestop"));
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
	void unreachableRegistryLogsOneErrorAndDoesNotDelayShutdownPastTheTimeout(CapturedOutput output) throws Exception {
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

	private HttpResponse<String> call(int port, String path) {
		try {
			return get(port, path);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A delayed registration is cancelled by shutdown: {@code register-delay=3s}, SIGTERM
	 * during the delay, a drain longer than the delay (the registry client stays open
	 * meanwhile; an unregistered application drains on SIGTERM only on Kubernetes, hence
	 * the cloud platform): the instance must never show up in the registry.
	 */
	@Test
	void sigtermDuringTheRegisterDelayMeansNeverRegistered() throws Exception {
		startUnregistered("atlas.lifecycle.register-delay=3s", "atlas.lifecycle.drain=5s",
				"spring.main.cloud-platform=kubernetes");
		assertThat(registered()).isEmpty();
		ConfigurableApplicationContext closing = this.app;
		this.app = null;
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(7)).until(() -> registered().isEmpty());
		shutdown.get(30, TimeUnit.SECONDS);
		assertThat(registered()).isEmpty();
	}

	/**
	 * A delayed registration is cancelled by preStop: the application keeps running
	 * (Kubernetes sends SIGTERM only after the hook), so nothing but the cancelled
	 * registration keeps the instance out of the registry.
	 */
	@Test
	void preStopDuringTheRegisterDelayMeansNeverRegistered() throws Exception {
		startUnregistered("atlas.lifecycle.register-delay=3s", "atlas.lifecycle.drain=0s");
		assertThat(management("/actuator/prestop").body()).contains("\"started\":true");
		await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(7)).until(() -> registered().isEmpty());
	}

	/**
	 * An application on Kubernetes that registers nothing (Kubernetes discovery; here
	 * ZooKeeper with registration turned off) on SIGTERM: readiness
	 * {@code OUT_OF_SERVICE} at once, still serving, and the drain takes its time.
	 */
	@Test
	void onKubernetesNotRegisteredStillRefusesTrafficAndDrainsOnSigterm(CapturedOutput output) throws Exception {
		startUnregistered("spring.cloud.zookeeper.discovery.register=false", "atlas.lifecycle.drain=3s",
				"spring.main.cloud-platform=kubernetes");
		ConfigurableApplicationContext closing = this.app;
		MeterRegistry meters = closing.getBean(MeterRegistry.class);
		long started = System.nanoTime();
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		await().atMost(Duration.ofSeconds(2))
			.until(() -> management("/actuator/health/readiness").body().contains("OUT_OF_SERVICE"));
		assertThat(get("/ping").body()).isEqualTo("pong");
		assertThat(shutdown).isNotDone();
		shutdown.get(30, TimeUnit.SECONDS);
		this.app = null;
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
		assertThat(meters.timer("atlas.lifecycle.drain").count()).isEqualTo(1);
		assertThat(meters.timer("atlas.lifecycle.drain").totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(3000);
		assertThat(registered()).isEmpty();
		assertThat(output.getOut()
			.lines()
			.filter((line) -> line.contains("Shutdown: ") && line.contains("draining for 3000 ms")
					&& line.contains("running on Kubernetes")))
			.hasSize(1);
	}

	/**
	 * An application that registers nothing outside Kubernetes (a local run, registration
	 * turned off, a test's context) on SIGTERM: readiness refuses traffic, but nothing
	 * reads it to route here, so closing does not wait out the 30 s drain.
	 */
	@Test
	void outsideKubernetesNotRegisteredRefusesTrafficAndDoesNotDrainOnSigterm(CapturedOutput output) throws Exception {
		startUnregistered("spring.cloud.zookeeper.discovery.register=false", "atlas.lifecycle.drain=30s",
				"spring.main.cloud-platform=none");
		ConfigurableApplicationContext closing = this.app;
		this.app = null;
		List<ReadinessState> readiness = new CopyOnWriteArrayList<>();
		closing.addApplicationListener((ApplicationListener<ApplicationEvent>) (event) -> {
			if (event instanceof AvailabilityChangeEvent<?> availability
					&& availability.getState() instanceof ReadinessState state) {
				readiness.add(state);
			}
		});
		MeterRegistry meters = closing.getBean(MeterRegistry.class);
		GracefulShutdown shutdown = closing.getBean(GracefulShutdown.class);
		closing.close();
		// Atlas's, and Spring Boot's own as each web context (application, management)
		// closes.
		assertThat(readiness).isNotEmpty().containsOnly(ReadinessState.REFUSING_TRAFFIC);
		assertThat(shutdown.state()).isEqualTo(GracefulShutdown.State.DRAINED);
		assertThat(meters.timer("atlas.lifecycle.drain").count()).isZero();
		assertThat(output.getOut()
			.lines()
			.filter((line) -> line.contains("Shutdown: ") && line.contains("does not run on Kubernetes")
					&& line.contains("no drain")))
			.hasSize(1);
		assertThat(registered()).isEmpty();
	}

	/**
	 * An unregistered application drains on preStop, with no registry at all: the call
	 * answers after the drain, while requests are still served.
	 */
	@Test
	void noRegistryAtAllStillRefusesTrafficAndDrainsOnPreStop() throws Exception {
		startUnregistered("spring.cloud.zookeeper.enabled=false", "atlas.lifecycle.drain=2s");
		CompletableFuture<HttpResponse<String>> preStop = CompletableFuture
			.supplyAsync(() -> call(this.managementPort, "/actuator/prestop"));
		await().atMost(Duration.ofSeconds(2))
			.until(() -> management("/actuator/health/readiness").body().contains("OUT_OF_SERVICE"));
		assertThat(get("/ping").body()).isEqualTo("pong");
		assertThat(preStop.get(30, TimeUnit.SECONDS).body()).contains("\"started\":true")
			.contains("\"state\":\"DRAINED\"");
		assertThat(drains()).isEqualTo(1);
		assertThat(
				this.app.getBean(MeterRegistry.class).timer("atlas.lifecycle.drain").totalTime(TimeUnit.MILLISECONDS))
			.isGreaterThanOrEqualTo(2000);
		assertThat(get("/ping").body()).as("still serving after the drain, until SIGTERM").isEqualTo("pong");
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
