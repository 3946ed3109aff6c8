package dev.atlas.autoconfigure.loadbalancer;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's defaults for Spring Cloud LoadBalancer: present at lowest precedence, never
 * over an application's own value, its default properties included.
 */
class AtlasDefaultsTest {

	private static MockEnvironment postProcessed(MockEnvironment environment) {
		new AtlasDefaults().postProcessEnvironment(environment, new SpringApplication());
		return environment;
	}

	@Test
	void retryIsOnByDefaultSoThatWebClientRetriesToo() {
		MockEnvironment environment = postProcessed(new MockEnvironment());
		assertThat(environment.getProperty("spring.cloud.loadbalancer.retry.enabled")).isEqualTo("true");
		assertThat(environment.getProperty("spring.cloud.loadbalancer.retry.retryable-status-codes")).isEqualTo("503");
	}

	@Test
	void springCloudsPerRequestMetersAreLeftOffAsSpringCloudHasThem() {
		MockEnvironment environment = postProcessed(new MockEnvironment());
		assertThat(environment.getProperty("spring.cloud.loadbalancer.stats.micrometer.enabled")).isNull();
	}

	@Test
	void anExplicitFalseWins() {
		MockEnvironment environment = new MockEnvironment();
		environment.getPropertySources()
			.addFirst(new MapPropertySource("application", Map.of("spring.cloud.loadbalancer.retry.enabled", "false")));
		postProcessed(environment);
		assertThat(environment.getProperty("spring.cloud.loadbalancer.retry.enabled")).isEqualTo("false");
	}

	/**
	 * Seen failing before: Spring Boot moves the application's default properties below
	 * every other source after the environment post-processors ran, so Atlas's default
	 * won.
	 */
	@ParameterizedTest(name = "{0}={1}")
	@CsvSource({ "spring.cloud.loadbalancer.retry.enabled, false, spring.cloud.loadbalancer.retry.enabled",
			"spring.cloud.loadbalancer.retry.retryable-status-codes, 502, spring.cloud.loadbalancer.retry.retryable-status-codes",
			"spring.cloud.loadbalancer.retry.retryableStatusCodes, 504, spring.cloud.loadbalancer.retry.retryable-status-codes" })
	void theApplicationsDefaultPropertiesWinOverAtlassDefaults(String name, String value, String canonical) {
		SpringApplication application = new SpringApplication(Empty.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(Map.of(name, value));
		try (ConfigurableApplicationContext context = application.run()) {
			assertThat(context.getEnvironment().getProperty(canonical)).isEqualTo(value);
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Empty.class)
			.web(WebApplicationType.NONE)
			.properties(name + "=" + value)
			.run()) {
			assertThat(context.getEnvironment().getProperty(canonical)).isEqualTo(value);
		}
	}

	@Test
	void atlassDefaultsApplyNextToOtherDefaultProperties() {
		SpringApplication application = new SpringApplication(Empty.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(Map.of("app.own", "x"));
		try (ConfigurableApplicationContext context = application.run()) {
			assertThat(context.getEnvironment().getProperty("spring.cloud.loadbalancer.retry.enabled"))
				.isEqualTo("true");
		}
	}

	@Test
	void nothingIsAddedWhenAtlasIsOff() {
		MockEnvironment environment = postProcessed(new MockEnvironment().withProperty("atlas.enabled", "false"));
		assertThat(environment.getProperty("spring.cloud.loadbalancer.retry.enabled")).isNull();
		assertThat(environment.getPropertySources().contains(AtlasDefaults.SOURCE)).isFalse();
	}

	/** An application with no beans of its own. */
	@Configuration(proxyBeanMethods = false)
	static class Empty {

	}

}
