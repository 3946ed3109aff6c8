package dev.atlas.autoconfigure.lifecycle;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.atlas.autoconfigure.Ports;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * {@code /actuator/prestop} takes the instance out of service, so it is served only on a
 * management port of its own, unless
 * {@code atlas.lifecycle.prestop.allow-on-server-port=true}. Real applications on random
 * ports, no registry (a web application that registers nothing still drains on a preStop
 * call, so the drain is 1 s here; closing them outside Kubernetes does not drain).
 */
@ExtendWith(OutputCaptureExtension.class)
class PreStopEndpointIT {

	private static final String WARNING = "/actuator/prestop is served on the application's own port";

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private ConfigurableApplicationContext app;

	@AfterEach
	void close() {
		if (this.app != null) {
			this.app.close();
		}
	}

	private ConfigurableApplicationContext start(String... properties) {
		this.app = new SpringApplicationBuilder(App.class)
			.properties("spring.application.name=prestop-app", "server.port=0", "spring.cloud.zookeeper.enabled=false",
					"spring.cloud.nacos.discovery.enabled=false", "spring.cloud.loadbalancer.enabled=false",
					"spring.main.banner-mode=off", "management.endpoint.health.probes.enabled=true",
					"atlas.lifecycle.drain=1s")
			.properties(properties)
			.run();
		return this.app;
	}

	private int port() {
		return ((WebServerApplicationContext) this.app).getWebServer().getPort();
	}

	private int managementPort() {
		return this.app.getEnvironment().getRequiredProperty("local.management.port", Integer.class);
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private GracefulShutdown shutdown() {
		return this.app.getBean(GracefulShutdown.class);
	}

	private double drains() {
		return this.app.getBean(MeterRegistry.class).timer(GracefulShutdown.DRAIN_METER).count();
	}

	@Test
	void exposedOnTheApplicationPortRefusesToStartAndSaysHowToFixIt() {
		assertThatException().isThrownBy(() -> start("management.endpoints.web.exposure.include=health,prestop"))
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessage(PreStopExposureGuard.REFUSAL);
		this.app = null;
	}

	@Test
	void exposedOnTheApplicationPortRefusesToStartWithLazyInitializationToo() {
		assertThatException()
			.isThrownBy(() -> start("spring.main.lazy-initialization=true",
					"management.endpoints.web.exposure.include=health,prestop"))
			.havingRootCause()
			.withMessage(PreStopExposureGuard.REFUSAL);
		this.app = null;
	}

	@Test
	void aManagementPortEqualToTheApplicationPortIsTheApplicationPort() throws IOException {
		int port = Ports.free();
		assertThatException()
			.isThrownBy(() -> start("server.port=" + port, "management.server.port=" + port,
					"management.endpoints.web.exposure.include=health,prestop"))
			.havingRootCause()
			.withMessage(PreStopExposureGuard.REFUSAL);
		this.app = null;
	}

	@Test
	void allowedOnTheApplicationPortStartsWithOneWarning(CapturedOutput output) throws Exception {
		start("management.endpoints.web.exposure.include=health,prestop",
				"atlas.lifecycle.prestop.allow-on-server-port=true");
		assertThat(output.getOut().lines().filter((line) -> line.contains(WARNING) && line.contains("WARN")))
			.hasSize(1);
		assertThat(get(port(), "/actuator/prestop").body()).contains("\"started\":true");
		assertThat(drains()).isEqualTo(1);
	}

	@Test
	void onItsOwnManagementPortItDrainsAndTheApplicationPortDoesNotServeIt(CapturedOutput output) throws Exception {
		start("management.server.port=0", "management.endpoints.web.exposure.include=health,prestop");
		assertThat(managementPort()).isNotEqualTo(port());
		HttpResponse<String> fromAClient = get(port(), "/actuator/prestop");
		assertThat(fromAClient.statusCode()).isEqualTo(404);
		assertThat(shutdown().state()).isEqualTo(GracefulShutdown.State.SERVING);
		assertThat(drains()).isZero();
		assertThat(get(managementPort(), "/actuator/health/readiness").body()).contains("UP");
		HttpResponse<String> fromTheHook = get(managementPort(), "/actuator/prestop");
		assertThat(fromTheHook.statusCode()).isEqualTo(200);
		assertThat(fromTheHook.body()).contains("\"started\":true").contains("\"state\":\"DRAINED\"");
		assertThat(drains()).isEqualTo(1);
		assertThat(output.getOut()).doesNotContain(WARNING);
	}

	@Test
	void notExposedOverHttpStartsWithoutAWarning(CapturedOutput output) {
		start("management.endpoints.web.exposure.include=health");
		assertThat(output.getOut()).doesNotContain(WARNING);
		assertThat(this.app.getBeanProvider(PreStopExposureGuard.class).getIfAvailable()).isNull();
	}

	@Test
	void exposedOverJmxOnlyStarts(CapturedOutput output) {
		start("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=prestop",
				"management.endpoints.web.exposure.include=health");
		assertThat(this.app.getBeanProvider(PreStopEndpoint.class).getIfAvailable()).isNotNull();
		assertThat(output.getOut()).doesNotContain(WARNING);
	}

	@Test
	void managementOverHttpTurnedOffStarts() {
		start("management.server.port=-1", "management.endpoints.web.exposure.include=health,prestop");
		assertThat(this.app.isRunning()).isTrue();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@RestController
	static class App {

		@GetMapping("/ping")
		String ping() {
			return "pong";
		}

	}

}
