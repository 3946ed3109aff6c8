package dev.atlas.autoconfigure.loadbalancer;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Atlas's defaults for Spring Cloud LoadBalancer properties, added as the
 * lowest-precedence property source (any value the application sets wins; nothing is
 * added when {@code atlas.enabled=false}):
 * <ul>
 * <li>{@code spring.cloud.loadbalancer.retry.enabled=true}: Spring Cloud LoadBalancer
 * retries idempotent requests once on another instance on a connect failure, for
 * RestTemplate, RestClient and Feign when the property is missing (with spring-retry on
 * the classpath), but for WebClient only when it is set to {@code true} (Spring Cloud
 * 2025.1 declares the retrying {@code RetryableLoadBalancerExchangeFilterFunction} only
 * then); set explicitly, WebClient retries too, and the blocking clients behave as with
 * the property missing. An application's {@code false} wins and turns retry off for every
 * client;</li>
 * <li>{@code spring.cloud.loadbalancer.retry.retryable-status-codes=503}: Atlas adds 503
 * to the retryable status codes, so a draining or overloaded instance's 503 is retried
 * elsewhere.</li>
 * </ul>
 * Spring Cloud's own {@code loadbalancer.requests.*} meters
 * ({@code spring.cloud.loadbalancer.stats.micrometer.enabled}) are left as Spring Cloud
 * has them (off): they build their tags and look up their timers on every request (about
 * 1.5 % of a caller's CPU time in the end-to-end benchmark) and, unless
 * {@code spring.cloud.loadbalancer.stats.include-path=false}, tag each request with its
 * path, one series per distinct path. Atlas's own meters are read from its statistics
 * when scraped.
 *
 * @since 0.1.0
 */
public class AtlasDefaults implements EnvironmentPostProcessor {

	/** Name of the property source holding Atlas's defaults. */
	public static final String SOURCE = "atlasDefaults";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("atlas.enabled", Boolean.class, true)
				|| environment.getPropertySources().contains(SOURCE)) {
			return;
		}
		Map<String, Object> defaults = new LinkedHashMap<>();
		defaults.put("spring.cloud.loadbalancer.retry.enabled", "true");
		defaults.put("spring.cloud.loadbalancer.retry.retryable-status-codes", "503");
		environment.getPropertySources().addLast(new MapPropertySource(SOURCE, defaults));
	}

}
