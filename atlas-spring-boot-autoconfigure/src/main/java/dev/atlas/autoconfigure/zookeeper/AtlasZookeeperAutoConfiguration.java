package dev.atlas.autoconfigure.zookeeper;

import dev.atlas.autoconfigure.registry.AtlasRegistryAutoConfiguration;
import org.apache.curator.framework.CuratorFramework;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.cloud.zookeeper.discovery.ZookeeperDiscoveryProperties;
import org.springframework.cloud.zookeeper.discovery.dependency.ZookeeperDependencies;
import org.springframework.context.annotation.Bean;

/**
 * ZooKeeper-specific support, on when Spring Cloud ZooKeeper discovery is on the
 * classpath and active and Atlas is enabled: every caller, registered or not, hears of
 * the changes of the services it calls ({@link ZookeeperInstanceChangeSource}).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = AtlasRegistryAutoConfiguration.class,
		afterName = { "org.springframework.cloud.zookeeper.discovery.ZookeeperDiscoveryAutoConfiguration",
				"org.springframework.cloud.zookeeper.ZookeeperAutoConfiguration",
				"org.springframework.cloud.zookeeper.discovery.dependency.ZookeeperDependenciesAutoConfiguration" })
@ConditionalOnClass({ CuratorFramework.class, ZookeeperDiscoveryProperties.class })
@ConditionalOnBean(AtlasRegistryAutoConfiguration.class)
public final class AtlasZookeeperAutoConfiguration {

	/**
	 * The per-service watches.
	 * @param curator the client of Spring Cloud ZooKeeper
	 * @param properties gives the registry root
	 * @param dependencies maps {@code spring.cloud.zookeeper.dependencies} aliases to
	 * paths, when configured
	 * @return the change source
	 */
	@Bean
	@ConditionalOnBean({ CuratorFramework.class, ZookeeperDiscoveryProperties.class })
	@ConditionalOnBooleanProperty(name = "atlas.registry.refresh-on-events", matchIfMissing = true)
	ZookeeperInstanceChangeSource atlasZookeeperInstanceChangeSource(CuratorFramework curator,
			ZookeeperDiscoveryProperties properties, ObjectProvider<ZookeeperDependencies> dependencies) {
		return new ZookeeperInstanceChangeSource(curator, properties.getRoot(), (serviceId) -> {
			ZookeeperDependencies configured = dependencies.getIfAvailable();
			String path = (configured != null && configured.hasDependencies()) ? configured.getPathForAlias(serviceId)
					: null;
			return (path != null && !path.isEmpty()) ? path : serviceId;
		});
	}

}
