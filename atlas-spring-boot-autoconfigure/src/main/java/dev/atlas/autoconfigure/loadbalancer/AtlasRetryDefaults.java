package dev.atlas.autoconfigure.loadbalancer;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Atlas's retry default: Spring Cloud LoadBalancer retries (with spring-retry on the classpath for
 * RestTemplate, RestClient and Feign; always for WebClient) idempotent requests once on another instance
 * on a connect failure; Atlas adds 503 to the retryable status codes
 * ({@code spring.cloud.loadbalancer.retry.retryable-status-codes=503}), so a draining or overloaded
 * instance's 503 is retried elsewhere. Added as the lowest-precedence property source: any value the
 * application sets wins. Not added when {@code atlas.enabled=false}.
 */
public class AtlasRetryDefaults implements EnvironmentPostProcessor {

	/** Name of the property source holding Atlas's defaults. */
	public static final String SOURCE = "atlasDefaults";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("atlas.enabled", Boolean.class, true)
				|| environment.getPropertySources().contains(SOURCE)) {
			return;
		}
		environment.getPropertySources()
			.addLast(new MapPropertySource(SOURCE,
					Map.of("spring.cloud.loadbalancer.retry.retryable-status-codes", "503")));
	}

}
