package dev.atlas.autoconfigure.gray;

import java.util.Map;

import dev.atlas.autoconfigure.settings.RegistrationMetadataContributor;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * Adds this application's own gray tag ({@code atlas.gray.own-tag}) to its registration
 * metadata, under {@code atlas.gray.metadata-key}, so that callers route their lanes to
 * it. Active whenever the lifecycle's registration metadata is (same conditions), and
 * before it.
 *
 * @since 0.1.0
 */
@AutoConfiguration(beforeName = "dev.atlas.autoconfigure.lifecycle.AtlasLifecycleAutoConfiguration")
@ConditionalOnClass({ ServiceRegistry.class, ProxyFactory.class })
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(GrayProperties.class)
public final class GrayRegistrationMetadataConfiguration {

	/**
	 * The own tag, trimmed, when it is set; first of the registration metadata.
	 * @param gray {@code atlas.gray.*}
	 * @return the contributor
	 */
	@Bean
	@Order(0)
	RegistrationMetadataContributor atlasGrayRegistrationMetadata(GrayProperties gray) {
		return () -> {
			String tag = gray.getOwnTag();
			return (tag != null && !tag.isBlank()) ? Map.of(gray.getMetadataKey(), tag.trim()) : Map.of();
		};
	}

}
