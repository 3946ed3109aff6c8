package dev.atlas.autoconfigure.loadbalancer;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's defaults for Spring Cloud LoadBalancer: present at lowest precedence, never
 * over an application's own value.
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

	@Test
	void nothingIsAddedWhenAtlasIsOff() {
		MockEnvironment environment = postProcessed(new MockEnvironment().withProperty("atlas.enabled", "false"));
		assertThat(environment.getProperty("spring.cloud.loadbalancer.retry.enabled")).isNull();
		assertThat(environment.getPropertySources().contains(AtlasDefaults.SOURCE)).isFalse();
	}

}
