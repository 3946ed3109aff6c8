package dev.atlas.autoconfigure.registry;

import java.time.Duration;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Follows the registry ({@code atlas.registry.*}) when Spring Cloud LoadBalancer is
 * present and enabled and {@code atlas.enabled} is not {@code false}: a registry change
 * event, or a change an {@link InstanceChangeSource} reports for one service, evicts the
 * cached instance lists at once ({@link RegistryEventRefresher}). The registry
 * integrations ({@code nacos}, {@code zookeeper}) declare their change sources after this
 * configuration.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass(ReactorServiceInstanceLoadBalancer.class)
@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RegistryProperties.class)
public final class AtlasRegistryAutoConfiguration {

	/**
	 * Evicts cached instance lists on registry events, and periodically during shutdown
	 * while some change source stops delivering (checked every 100 ms).
	 * @param beanFactory where Spring Cloud LoadBalancer's cache managers are
	 * @param context the root application context
	 * @param changeSources the registries' change sources
	 * @return the refresher
	 */
	@Bean
	@ConditionalOnBooleanProperty(name = "atlas.registry.refresh-on-events", matchIfMissing = true)
	RegistryEventRefresher atlasRegistryEventRefresher(ListableBeanFactory beanFactory, ApplicationContext context,
			ObjectProvider<InstanceChangeSource> changeSources) {
		return new RegistryEventRefresher(beanFactory, context,
				() -> changeSources.stream().anyMatch((source) -> !source.deliversDuringShutdown()),
				Duration.ofMillis(100));
	}

}
