package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.AtlasProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Makes Atlas the load balancer of every {@code @LoadBalanced} RestTemplate, RestClient,
 * WebClient and Feign client, when Spring Cloud LoadBalancer is present and enabled and
 * {@code atlas.enabled} is not {@code false}.
 */
@AutoConfiguration(before = LoadBalancerAutoConfiguration.class)
@ConditionalOnClass(ReactorServiceInstanceLoadBalancer.class)
@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(AtlasProperties.class)
@LoadBalancerClients(defaultConfiguration = AtlasLoadBalancerClientConfiguration.class)
public class AtlasLoadBalancerAutoConfiguration {

	private static final Logger log = LoggerFactory.getLogger(AtlasLoadBalancerAutoConfiguration.class);

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToStrategy atlasStrategyConverter() {
		return new AtlasValueConverters.ToStrategy();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToAllZeroWeightsPolicy atlasAllZeroWeightsPolicyConverter() {
		return new AtlasValueConverters.ToAllZeroWeightsPolicy();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToGrayFallback atlasGrayFallbackConverter() {
		return new AtlasValueConverters.ToGrayFallback();
	}

	@Bean
	@ConditionalOnBooleanProperty(name = "atlas.registry.refresh-on-events", matchIfMissing = true)
	RegistryEventRefresher atlasRegistryEventRefresher(ListableBeanFactory beanFactory) {
		return new RegistryEventRefresher(beanFactory);
	}

	@Bean
	SmartInitializingSingleton atlasLoadBalancerStartupReport(AtlasProperties properties, Environment environment) {
		return () -> {
			log.info(StartupReport.features(properties, environment));
			StartupReport.conflicts(properties, environment).forEach(log::warn);
		};
	}

}
