package dev.atlas.autoconfigure.loadbalancer;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.atlas.autoconfigure.runtime.NeverRebound;
import dev.atlas.autoconfigure.settings.SourceValues;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;

/**
 * Atlas's defaults for Spring Cloud LoadBalancer properties, added as the
 * lowest-precedence property source (any value the application sets wins, its default
 * properties included: a setting they make is left out, since Spring Boot keeps them
 * below this source; nothing is added when {@code atlas.enabled=false}):
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
 * <p>
 * Also adds {@link NeverRebound}, which keeps Atlas's properties beans out of Spring
 * Cloud's rebinding on a refresh, whatever {@code atlas.enabled} says.
 *
 * @since 0.1.0
 */
public class AtlasDefaults implements EnvironmentPostProcessor {

	/** Name of the property source holding Atlas's defaults. */
	public static final String SOURCE = "atlasDefaults";

	/** Spring Boot's name of the application's default properties source. */
	private static final String APPLICATION_DEFAULTS = "defaultProperties";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getPropertySources().contains(NeverRebound.NAME)) {
			environment.getPropertySources().addFirst(new NeverRebound(environment));
		}
		if (!environment.getProperty("atlas.enabled", Boolean.class, true)
				|| environment.getPropertySources().contains(SOURCE)) {
			return;
		}
		Map<String, Object> defaults = new LinkedHashMap<>();
		defaults.put("spring.cloud.loadbalancer.retry.enabled", "true");
		defaults.put("spring.cloud.loadbalancer.retry.retryable-status-codes", "503");
		// Spring Boot keeps the application's default properties
		// (SpringApplication.setDefaultProperties, SpringApplicationBuilder.properties)
		// last, below this source: a setting they make is left out here, so that it wins.
		PropertySource<?> applicationDefaults = environment.getPropertySources().get(APPLICATION_DEFAULTS);
		if (applicationDefaults != null) {
			defaults.keySet()
				.removeIf((name) -> SourceValues.find(applicationDefaults, ConfigurationPropertyName.of(name)) != null);
		}
		environment.getPropertySources().addLast(new MapPropertySource(SOURCE, defaults));
	}

}
