package dev.atlas.autoconfigure.nacos;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.atlas.autoconfigure.ForkedApp;
import dev.atlas.autoconfigure.Ports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Graceful shutdown on a real Nacos server, of an application in a JVM of its own stopped
 * by a real SIGTERM: while it drains, its own load-balanced calls (a second hop, a
 * scheduled job) still follow the registry — they stop choosing the stopping instance
 * itself, and an instance disabled meanwhile, within 1 s — and its Nacos client shuts
 * down only after the drain and the web server (log order).
 * <p>
 * Two things froze that view before: Spring Cloud's deregistration closes the service
 * registry, and Spring Cloud Alibaba's {@code close()} shut the shared naming service
 * down right after SIGTERM; and the Nacos client stops delivering change events in a JVM
 * shutdown hook of its own, which only a real SIGTERM runs (an in-process
 * {@code context.close()} does not).
 */
@EnabledIfEnvironmentVariable(named = NacosApps.ADDRESS_VARIABLE, matches = ".+", disabledReason = NacosApps.SKIPPED)
class NacosGracefulShutdownIT {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private NacosApps nacos;

	private Process stopping;

	@BeforeEach
	void nacos() {
		this.nacos = new NacosApps();
	}

	@AfterEach
	void stop() throws InterruptedException {
		if (this.stopping != null && this.stopping.isAlive()) {
			this.stopping.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		this.nacos.close();
	}

	@Test
	void aDrainingApplicationsOwnCallsFollowTheRegistryAndItsNacosClientClosesLast(@TempDir Path logs)
			throws Exception {
		String service = NacosApps.service("draining");
		String[] common = { "app.target=" + service, "atlas.loadbalancer.strategy=smooth-round-robin",
				"atlas.warmup.enabled=false" };
		ConfigurableApplicationContext other = this.nacos.start(service, common);
		ConfigurableApplicationContext disabled = this.nacos.start(service, common);
		int otherPort = NacosApps.port(other);
		int disabledPort = NacosApps.port(disabled);
		int stoppingPort = Ports.free();
		Path log = logs.resolve("stopping.log");
		this.stopping = fork(log, "--spring.application.name=" + service, "--server.port=" + stoppingPort,
				"--spring.cloud.nacos.discovery.server-addr=" + this.nacos.address(),
				"--spring.cloud.nacos.discovery.ip=127.0.0.1", "--spring.cloud.zookeeper.enabled=false",
				"--spring.cloud.zookeeper.discovery.enabled=false", "--spring.main.banner-mode=off",
				"--atlas.lifecycle.drain=8s", "--" + common[0], "--" + common[1], "--" + common[2]);
		await("the forked application is listed").atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> this.nacos.listedPorts(service).contains(stoppingPort) || !this.stopping.isAlive());
		assertThat(this.stopping.isAlive()).as("forked application running; its log:%n%s", tail(log)).isTrue();
		// Smooth round robin over three: the forked application also calls itself.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> answers(stoppingPort, 30).containsAll(Set.of(stoppingPort, otherPort, disabledPort)));

		this.stopping.destroy(); // SIGTERM
		await().atMost(Duration.ofSeconds(3)).until(() -> !this.nacos.listedPorts(service).contains(stoppingPort));
		long deregistered = System.nanoTime();
		// six calls: smooth round robin over the instances left, so each one answers at
		// least twice
		await().atMost(Duration.ofSeconds(1))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> !answers(stoppingPort, 6).contains(stoppingPort));
		long selfGone = System.nanoTime();

		this.nacos.updateInstance(service, disabledPort, 1.0, false, Map.of());
		long disabledAt = System.nanoTime();
		await().atMost(Duration.ofSeconds(1))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> answers(stoppingPort, 6).equals(Set.of(otherPort)));
		long disabledGone = System.nanoTime();
		String duringDrain = Files.readString(log, StandardCharsets.UTF_8);
		assertThat(duringDrain).contains("Shutdown: deregistering, then draining").doesNotContain("drain over");
		System.out.printf(
				"nacos-it: after SIGTERM, during the drain: the stopping app's own calls left itself %d ms "
						+ "after the server stopped listing it, and a disabled instance %d ms after the admin call%n",
				TimeUnit.NANOSECONDS.toMillis(selfGone - deregistered),
				TimeUnit.NANOSECONDS.toMillis(disabledGone - disabledAt));

		assertThat(this.stopping.waitFor(60, TimeUnit.SECONDS)).as("stopped").isTrue();
		String all = Files.readString(log, StandardCharsets.UTF_8);
		int drainOver = all.indexOf("Shutdown: drain over");
		int registryClosed = all.indexOf("Shutdown: web server stopped; closing the registry client");
		int namingShutdown = all.indexOf("NamingClientProxyDelegate do shutdown begin");
		assertThat(drainOver).as("drain over, in %s", log).isNotNegative();
		assertThat(registryClosed).as("registry client closed after the drain").isGreaterThan(drainOver);
		assertThat(namingShutdown).as("Nacos naming client shut down after the drain").isGreaterThan(drainOver);
	}

	/** GET {@code /call} of the forked application a number of times: who answered. */
	private Set<Integer> answers(int port, int times) throws IOException, InterruptedException {
		Set<Integer> answers = new HashSet<>();
		for (int i = 0; i < times; i++) {
			HttpResponse<String> response = this.http
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/call"))
					.timeout(Duration.ofSeconds(5))
					.build(), HttpResponse.BodyHandlers.ofString());
			answers.add(Integer.parseInt(response.body().trim()));
		}
		return answers;
	}

	private static Process fork(Path log, String... arguments) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add("-Dnacos.logging.default.config.enabled=false");
		command.add("-XX:TieredStopAtLevel=1");
		command.add(ForkedApp.Main.class.getName());
		command.addAll(List.of(arguments));
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
	}

	private static String tail(Path log) throws IOException {
		List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
		return String.join(System.lineSeparator(), lines.subList(Math.max(0, lines.size() - 40), lines.size()));
	}

}
