package dev.atlas.autoconfigure.lifecycle;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.atlas.autoconfigure.Ports;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Registration only once the application is ready, against a real ZooKeeper (in-process)
 * and a real Spring Boot application with a slow start-up runner. The runner blocks on a
 * latch the test releases, so "before ready" is a state, not a guess about timing.
 */
class LosslessRegistrationIT {

	private static ZooKeeperRegistry zookeeper;

	private static final CountDownLatch releaseRunner = new CountDownLatch(1);

	private static final CountDownLatch eagerRelease = new CountDownLatch(1);

	private static volatile boolean failRunner;

	private ConfigurableApplicationContext app;

	@BeforeAll
	static void registry() throws Exception {
		zookeeper = new ZooKeeperRegistry();
	}

	@AfterAll
	static void closeRegistry() throws IOException {
		zookeeper.close();
	}

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
	}

	private CompletableFuture<ConfigurableApplicationContext> start(String name, int port, String... properties) {
		SpringApplicationBuilder builder = new SpringApplicationBuilder(SlowApp.class).properties(
				"spring.application.name=" + name, "server.port=" + port,
				"spring.cloud.zookeeper.connect-string=" + zookeeper.connectString(),
				"spring.cloud.zookeeper.discovery.instance-host=127.0.0.1", "spring.cloud.loadbalancer.enabled=false",
				"spring.main.banner-mode=off", "spring.cloud.nacos.discovery.enabled=false",
				"atlas.lifecycle.drain=0s");
		builder.properties(properties);
		return CompletableFuture.supplyAsync(() -> builder.run());
	}

	private static List<String> registered(String name) throws Exception {
		return zookeeper.registered(name);
	}

	private static String firstPayload(String name) throws Exception {
		return zookeeper.firstPayload(name);
	}

	@Test
	void notVisibleBeforeReadyAndVisibleWithinTwoSecondsAfter() throws Exception {
		int port = Ports.free();
		CompletableFuture<ConfigurableApplicationContext> started = start("slow-app", port);
		// The web server is up (Spring Cloud would have registered by now) while the
		// runner still runs.
		await().atMost(Duration.ofSeconds(30)).until(() -> Ports.listening(port));
		await().during(Duration.ofSeconds(1))
			.atMost(Duration.ofSeconds(3))
			.until(() -> registered("slow-app").isEmpty());
		long released = System.currentTimeMillis();
		releaseRunner.countDown();
		await().atMost(Duration.ofSeconds(2)).until(() -> registered("slow-app").size() == 1);
		this.app = started.get(30, TimeUnit.SECONDS);
		String payload = firstPayload("slow-app");
		assertThat(payload).contains("\"atlas.registered-at\"");
		long registeredAt = Long
			.parseLong(payload.replaceAll("(?s).*\"atlas.registered-at\"\\s*:\\s*\"(\\d+)\".*", "$1"));
		assertThat(registeredAt).isBetween(released - 1_000, System.currentTimeMillis());
	}

	@Test
	void withoutAtlasTheSlowAppIsVisibleBeforeItIsReady() throws Exception {
		int port = Ports.free();
		CompletableFuture<ConfigurableApplicationContext> started = start("eager-app", port,
				"atlas.lifecycle.register-when-ready=false", "slow-app.block=true");
		await().atMost(Duration.ofSeconds(30)).until(() -> registered("eager-app").size() == 1);
		assertThat(started).isNotDone();
		eagerRelease.countDown();
		this.app = started.get(30, TimeUnit.SECONDS);
	}

	@Test
	void failedStartupIsNeverRegistered() throws Exception {
		int port = Ports.free();
		failRunner = true;
		try {
			// The web server started (port bound) before the runner failed; Spring Cloud
			// alone would have
			// registered the instance at that point.
			CompletableFuture<ConfigurableApplicationContext> started = start("broken-app", port, "slow-app.fail=true");
			await().atMost(Duration.ofSeconds(30)).until(started::isDone);
			assertThat(started).isCompletedExceptionally();
			assertThat(started.handle((app, ex) -> ex).get()).rootCause().hasMessage("start-up failed on purpose");
			assertThat(registered("broken-app")).isEmpty();
		}
		finally {
			failRunner = false;
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class SlowApp {

		@Bean
		ApplicationRunner slowStartup(Environment environment) {
			return (args) -> {
				String name = environment.getProperty("spring.application.name");
				if (environment.getProperty("slow-app.fail", Boolean.class, false)) {
					throw new IllegalStateException("start-up failed on purpose");
				}
				CountDownLatch latch = "eager-app".equals(name) ? eagerRelease : releaseRunner;
				if (!latch.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("the test never released the runner");
				}
			};
		}

	}

}
