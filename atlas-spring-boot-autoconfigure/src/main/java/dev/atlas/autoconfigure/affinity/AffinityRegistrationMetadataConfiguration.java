package dev.atlas.autoconfigure.affinity;

import java.util.Map;

import dev.atlas.autoconfigure.settings.RegistrationMetadataContributor;
import dev.atlas.loadbalancer.instance.MetadataKeys;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * Adds this application's own cluster ({@code atlas.affinity.cluster}) to its
 * registration metadata, as {@link MetadataKeys#ZONE}, so that callers' cluster affinity
 * sees it; not when Nacos's own cluster
 * ({@code spring.cloud.nacos.discovery.cluster-name}) is set, which Nacos registers
 * itself. Active whenever the lifecycle's registration metadata is (same conditions), and
 * before it.
 *
 * @since 0.1.0
 */
@AutoConfiguration(beforeName = "dev.atlas.autoconfigure.lifecycle.AtlasLifecycleAutoConfiguration")
@ConditionalOnClass({ ServiceRegistry.class, ProxyFactory.class })
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(AffinityProperties.class)
public final class AffinityRegistrationMetadataConfiguration {

	/**
	 * The cluster, trimmed, when it is set and Nacos's is not; after the gray tag.
	 * @param affinity {@code atlas.affinity.*}
	 * @param environment where Nacos's cluster name would be set
	 * @return the contributor
	 */
	@Bean
	@Order(100)
	RegistrationMetadataContributor atlasAffinityRegistrationMetadata(AffinityProperties affinity,
			Environment environment) {
		return () -> {
			String cluster = affinity.getCluster();
			return (cluster != null && !cluster.isBlank()
					&& !environment.containsProperty("spring.cloud.nacos.discovery.cluster-name"))
							? Map.of(MetadataKeys.ZONE, cluster.trim()) : Map.of();
		};
	}

}
