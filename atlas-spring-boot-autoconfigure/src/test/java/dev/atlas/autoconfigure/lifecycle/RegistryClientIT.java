package dev.atlas.autoconfigure.lifecycle;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.atlas.autoconfigure.Ports;
import dev.atlas.autoconfigure.actuator.AtlasEndpoint;
import dev.atlas.autoconfigure.registry.InstanceChangeSource;
import dev.atlas.autoconfigure.registry.RegistryEventRefresher;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;
import org.springframework.cloud.zookeeper.serviceregistry.ZookeeperRegistration;
import org.springframework.cloud.zookeeper.serviceregistry.ZookeeperServiceRegistry;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Atlas around registry clients that behave as real ones do: one refuses a registration
 * by throwing (Spring Cloud Alibaba with {@code fail-fast=true}, ZooKeeper), one accepts
 * it and registers only later by itself (Nacos with {@code fail-fast=false}: the Nacos
 * client re-registers once the server is back), and every one closes in {@code close()}
 * what Spring Cloud's deregistration also closes (Nacos's naming service, which the drain
 * still needs). The registry is a real in-process ZooKeeper; the application's
 * {@link ZookeeperServiceRegistry} is a subclass adding the behaviour under test
 * ({@code registry.mode}).
 */
class RegistryClientIT {

	private static ZooKeeperRegistry zookeeper;

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
		TestRegistry.release = new CountDownLatch(1);
	}

	private static ConfigurableApplicationContext start(String name, String... properties) {
		return new SpringApplicationBuilder(App.class)
			.properties("spring.application.name=" + name, "server.port=0",
					"spring.cloud.zookeeper.connect-string=" + zookeeper.connectString(),
					"spring.cloud.zookeeper.discovery.instance-host=127.0.0.1", "spring.main.banner-mode=off",
					"spring.cloud.nacos.discovery.enabled=false", "management.endpoints.web.exposure.include=atlas",
					"atlas.lifecycle.drain=0s")
			.properties(properties)
			.run();
	}

	private static List<String> registered(String name) throws Exception {
		return zookeeper.registered(name);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> lifecycle(ConfigurableApplicationContext app) {
		return (Map<String, Object>) app.getBean(AtlasEndpoint.class).atlas().get("lifecycle");
	}

	/**
	 * Without Atlas the registration fails startup (at the web server event); with Atlas,
	 * which registers only once the application is ready, it must fail startup just the
	 * same instead of leaving a running application that believes it is registered.
	 */
	@ParameterizedTest(name = "atlas.enabled={0}")
	@ValueSource(booleans = { true, false })
	void aRegistryThatRefusesTheRegistrationFailsStartupWithAtlasAsWithout(boolean atlas) throws Exception {
		String name = "refused-app-" + atlas;
		assertThatThrownBy(() -> this.app = start(name, "registry.mode=refuse", "atlas.enabled=" + atlas))
			.satisfies((ex) -> assertThat(NestedExceptionUtils.getMostSpecificCause(ex))
				.hasMessage("registry refused on purpose"));
		assertThat(registered(name)).isEmpty();
	}

	/**
	 * The registry accepts the registration but lists the instance only later: Atlas
	 * reports it pending until the registry lists it, then registered; on shutdown it
	 * deregisters and drains.
	 */
	@Test
	void aRegistrationTheRegistryCompletesLaterIsKnownOnceListedAndDeregistersAndDrains() throws Exception {
		this.app = start("late-app", "registry.mode=late", "atlas.lifecycle.drain=2s");
		assertThat(registered("late-app")).isEmpty();
		assertThat(lifecycle(this.app)).containsEntry("registered", false).containsEntry("registration", "PENDING");
		TestRegistry.release.countDown();
		await().atMost(Duration.ofSeconds(5)).until(() -> registered("late-app").size() == 1);
		await().atMost(Duration.ofSeconds(2)).until(() -> "LISTED".equals(lifecycle(this.app).get("registration")));
		assertThat(lifecycle(this.app)).containsEntry("registered", true);

		ConfigurableApplicationContext closing = this.app;
		MeterRegistry meters = closing.getBean(MeterRegistry.class);
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		await().atMost(Duration.ofSeconds(1)).until(() -> registered("late-app").isEmpty());
		assertThat(shutdown).isNotDone();
		shutdown.get(30, TimeUnit.SECONDS);
		assertThat(meters.timer(GracefulShutdown.DRAIN_METER).count()).isEqualTo(1);
		this.app = null;
	}

	/**
	 * Spring Cloud's deregistration also calls {@code ServiceRegistry.close()}; Atlas
	 * holds it until the drain is over and the web server has stopped.
	 */
	@Test
	void theRegistryClientClosesAfterTheDrainAndAfterTheWebServerStopped() throws Exception {
		this.app = start("closing-app", "atlas.lifecycle.drain=1s");
		await().atMost(Duration.ofSeconds(5)).until(() -> registered("closing-app").size() == 1);
		TestRegistry registry = this.app.getBean(TestRegistry.class);
		this.app.close();
		this.app = null;
		assertThat(registry.closes()).isNotEmpty();
		assertThat(registry.closes().get(0)).isEqualTo("DRAINED, web server stopped");
	}

	/**
	 * With a registry client that stops delivering change events at JVM shutdown (as
	 * Nacos's does), the periodic refresh must run during the drain, not after it:
	 * Atlas's shutdown sequence blocks the context's closing for the whole drain.
	 */
	@Test
	void withARegistryThatFallsSilentAtShutdownListsRefreshDuringTheDrain() throws Exception {
		this.app = start("silent-app", "registry.silent-at-shutdown=true", "atlas.lifecycle.drain=2s");
		await().atMost(Duration.ofSeconds(5)).until(() -> registered("silent-app").size() == 1);
		RegistryEventRefresher refresher = this.app.getBean(RegistryEventRefresher.class);
		GracefulShutdown sequence = this.app.getBean(GracefulShutdown.class);
		assertThat(refresher.isRefreshing()).isFalse();
		ConfigurableApplicationContext closing = this.app;
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(closing::close);
		await().atMost(Duration.ofSeconds(1))
			.until(() -> sequence.state() == GracefulShutdown.State.DRAINING && refresher.isRefreshing());
		shutdown.get(30, TimeUnit.SECONDS);
		this.app = null;
		assertThat(refresher.isRefreshing()).isFalse();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		@ConditionalOnBooleanProperty("registry.silent-at-shutdown")
		InstanceChangeSource silentAtShutdown() {
			return new InstanceChangeSource() {

				@Override
				public void subscribe(String serviceId, Runnable onChange) {
				}

				@Override
				public boolean deliversDuringShutdown() {
					return false;
				}

			};
		}

		/** Primary: Spring Cloud ZooKeeper's own registry bean cannot be replaced. */
		@Bean
		@Primary
		TestRegistry testRegistry(ApplicationContext context, Environment environment) {
			@SuppressWarnings("unchecked")
			ServiceDiscovery<ZookeeperInstance> discovery = context.getBean(ServiceDiscovery.class);
			return new TestRegistry(discovery, environment.getProperty("registry.mode", "plain"), context);
		}

	}

	/** A ZooKeeper registry that refuses, registers late, and records its closes. */
	static class TestRegistry extends ZookeeperServiceRegistry {

		static volatile CountDownLatch release = new CountDownLatch(1);

		private final List<String> closes = new CopyOnWriteArrayList<>();

		private final String mode;

		private final ApplicationContext context;

		private volatile int port = -1;

		TestRegistry(ServiceDiscovery<ZookeeperInstance> discovery, String mode, ApplicationContext context) {
			super(discovery);
			this.mode = mode;
			this.context = context;
		}

		@Override
		public void register(ZookeeperRegistration registration) {
			this.port = registration.getPort();
			if ("refuse".equals(this.mode)) {
				throw new IllegalStateException("registry refused on purpose");
			}
			if ("late".equals(this.mode)) {
				CountDownLatch latch = release;
				CompletableFuture.runAsync(() -> {
					try {
						if (latch.await(30, TimeUnit.SECONDS)) {
							super.register(registration);
						}
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				});
				return;
			}
			super.register(registration);
		}

		/**
		 * What was true at each {@code close()}: the shutdown sequence's state and
		 * whether the web server still accepted connections.
		 * @return one line per close, in order
		 */
		List<String> closes() {
			return this.closes;
		}

		@Override
		public void close() {
			String state;
			try {
				state = this.context.getBean(GracefulShutdown.class).state().name();
			}
			catch (RuntimeException ex) {
				state = "destroyed";
			}
			this.closes.add(state + ", web server " + (Ports.listening(this.port) ? "still serving" : "stopped"));
			super.close();
		}

	}

}
