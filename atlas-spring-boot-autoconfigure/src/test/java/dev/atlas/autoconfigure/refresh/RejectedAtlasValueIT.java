package dev.atlas.autoconfigure.refresh;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.outlier.OutlierProperties;
import dev.atlas.autoconfigure.outlier.OutlierSection;
import dev.atlas.autoconfigure.runtime.RuntimeRules;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.config.annotation.RefreshScope;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refresh that brings one invalid {@code atlas.*} value next to the application's own
 * keys still succeeds, on a real application (registered in ZooKeeper): the refresh
 * answers 200, the application's own {@code @ConfigurationProperties} bean and its
 * {@code @RefreshScope} bean get the new value, Atlas rejects its own change (ERROR
 * naming the key that was written, {@code atlas.config.rejected}) and keeps its rules,
 * and later refreshes work while the invalid value stays. One invalid value per
 * {@code atlas.*} section (out of range, or not convertible), and the service overrides;
 * through {@code /actuator/refresh} and through Spring Cloud's {@link ContextRefresher},
 * which a Nacos config push and a Spring Cloud Bus refresh event call.
 *
 * <p>
 * Seen failing before Atlas kept its properties beans out of Spring Cloud's rebinding:
 * the refresh answered 500 (the rebinder rethrew Atlas's
 * {@code IllegalArgumentException}, or the binding failure), for every case.
 */
@ExtendWith(OutputCaptureExtension.class)
class RejectedAtlasValueIT {

	@TempDir
	static Path directory;

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext app;

	private static RestClient management;

	private static Path config;

	private static int generation;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		config = directory.resolve("pushed.properties");
		write(Map.of("app.own.greeting", "hello-0"));
		app = apps.start(OwnKeysApp.class, "own-keys", "spring.config.import=optional:file:" + config.toAbsolutePath(),
				"management.server.port=0", "management.endpoints.web.exposure.include=refresh,atlas",
				// a service with settings of its own: its rules are checked under its
				// prefix
				"atlas.services.provider.loadbalancer.strategy=weighted-random");
		management = RestClient.create(
				"http://127.0.0.1:" + app.getEnvironment().getRequiredProperty("local.management.port", Integer.class));
	}

	@AfterAll
	static void stop() throws Exception {
		if (apps != null) {
			apps.close();
		}
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource({ "atlas.loadbalancer.strategy, no-such-strategy, true",
			"atlas.loadbalancer.all-zero-weights, bogus, true", "atlas.gray.enabled, maybe, true",
			"atlas.services.own-keys.gray.weights.v2, 150, true", "atlas.warmup.min-weight-percent, 150, true",
			"atlas.affinity.min-healthy-ratio, 2, true", "atlas.outlier.max-ejection-percent, 150, true",
			"atlas.outlier.base-ejection-time, soon, true",
			"atlas.services.own-keys.outlier.max-ejection-percent, 150, true", "atlas.lifecycle.drain, -1s, false",
			"atlas.registry.stale-limit, later, false", "atlas.propagation.reactor-automatic, maybe, false" })
	void aRefreshWithAnInvalidAtlasValueAppliesTheApplicationsOwnKeys(String key, String value, boolean runtime,
			CapturedOutput output) throws Exception {
		double rejectedBefore = rejected();
		String greeting = nextGreeting();
		assertThat(refresh(Map.of("app.own.greeting", greeting, key, value))).as("refresh status").isEqualTo(200);
		assertThat(app.getBean(OwnKeys.class).getGreeting()).as("the application's @ConfigurationProperties")
			.isEqualTo(greeting);
		assertThat(app.getBean(Greeter.class).greeting()).as("the application's @RefreshScope bean")
			.isEqualTo(greeting);
		if (runtime) {
			assertThat(rejected()).as("atlas.config.rejected").isGreaterThan(rejectedBefore);
			assertThat(output.getOut()).contains("Atlas rejected the configuration change").contains(key);
			if (!key.startsWith("atlas.services.")) {
				assertThat(output.getOut()).as("names the key written, not a per-service one")
					.doesNotContain("atlas.services.provider." + key.substring("atlas.".length()));
			}
		}

		// Later refreshes work while the invalid value stays, and through the refresher a
		// Nacos push or a Bus event calls.
		String later = nextGreeting();
		assertThat(refresh(Map.of("app.own.greeting", later, key, value))).as("later refresh status").isEqualTo(200);
		assertThat(app.getBean(OwnKeys.class).getGreeting()).isEqualTo(later);
		String pushed = nextGreeting();
		write(Map.of("app.own.greeting", pushed, key, value));
		app.getBean(ContextRefresher.class).refresh();
		assertThat(app.getBean(Greeter.class).greeting()).as("after ContextRefresher.refresh()").isEqualTo(pushed);

		// Removing the value leaves a valid configuration again.
		String valid = nextGreeting();
		assertThat(refresh(Map.of("app.own.greeting", valid))).isEqualTo(200);
		assertThat(app.getBean(OwnKeys.class).getGreeting()).isEqualTo(valid);
	}

	@Test
	void atlasPropertiesBeansKeepTheirStartupValuesWhileTheRulesFollowTheRefresh() throws Exception {
		assertThat(refresh(Map.of("app.own.greeting", nextGreeting(), "atlas.outlier.max-ejection-percent", "30")))
			.isEqualTo(200);
		assertThat(app.getEnvironment().getProperty("spring.cloud.refresh.never-refreshable"))
			.contains("com.zaxxer.hikari.HikariDataSource")
			.contains("dev.atlas.autoconfigure.outlier.OutlierProperties");
		assertThat(app.getBean(OutlierProperties.class).getMaxEjectionPercent()).as("the bean, as started (default)")
			.isEqualTo(50.0);
		assertThat(app.getBean(AtlasSettings.class)
			.settingsFor("provider")
			.get(OutlierSection.SECTION)
			.maxEjectionPercent()).as("the rules in force").isEqualTo(30.0);
		assertThat(refresh(Map.of("app.own.greeting", nextGreeting()))).isEqualTo(200);
	}

	private static String nextGreeting() {
		return "hello-" + (++generation);
	}

	private static double rejected() {
		return app.getBean(MeterRegistry.class)
			.find(RuntimeRules.REJECTED_METER)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	private static int refresh(Map<String, String> properties) throws IOException {
		write(properties);
		return management.post()
			.uri("/actuator/refresh")
			.exchange((request, response) -> response.getStatusCode().value());
	}

	private static void write(Map<String, String> properties) throws IOException {
		RulesFiles.write(config, properties);
	}

	/** An application with keys of its own, refreshed next to Atlas's. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableConfigurationProperties(OwnKeys.class)
	static class OwnKeysApp {

		@Bean
		@RefreshScope
		Greeter greeter(@Value("${app.own.greeting:none}") String greeting) {
			return new Greeter(greeting);
		}

	}

	/** The application's own {@code @ConfigurationProperties}. */
	@ConfigurationProperties("app.own")
	public static class OwnKeys {

		private String greeting = "none";

		public String getGreeting() {
			return this.greeting;
		}

		public void setGreeting(String greeting) {
			this.greeting = greeting;
		}

	}

	/** The application's own {@code @RefreshScope} bean (not final: it is proxied). */
	public static class Greeter {

		private final String greeting;

		Greeter(String greeting) {
			this.greeting = greeting;
		}

		public String greeting() {
			return this.greeting;
		}

	}

}
