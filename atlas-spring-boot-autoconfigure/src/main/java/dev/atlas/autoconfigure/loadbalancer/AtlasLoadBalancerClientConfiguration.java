package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.AtlasProperties;
import dev.atlas.loadbalancer.choice.AtlasLoadBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.MetadataKeys;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

/**
 * The configuration of every load-balancer child context (one per service), registered through
 * {@code @LoadBalancerClients(defaultConfiguration = ...)} by {@link AtlasLoadBalancerAutoConfiguration}.
 * Not meant for component scanning.
 *
 * <p>Atlas's balancer steps aside for a balancer that the application declares for one service with
 * {@code @LoadBalancerClient(name = ..., configuration = ...)}. It does not step aside for Spring Cloud
 * Alibaba's {@code NacosLoadBalancer} (turned on by {@code spring.cloud.loadbalancer.nacos.enabled=true}):
 * with Atlas enabled, Atlas is in charge, whatever order the two default configurations are registered
 * in, and startup says so.
 */
@Configuration(proxyBeanMethods = false)
public class AtlasLoadBalancerClientConfiguration {

	/** Meters go nowhere when the application has no (single) MeterRegistry. */
	private static final MeterRegistry NO_METERS = new CompositeMeterRegistry();

	@Bean
	@Primary
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	public ReactorLoadBalancer<ServiceInstance> atlasLoadBalancer(Environment environment,
			LoadBalancerClientFactory loadBalancerClientFactory, AtlasProperties properties,
			ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME, "");
		AtlasProperties.ResolvedLoadBalancer settings = properties.resolve(serviceId);
		MeterRegistry meters = meterRegistry.getIfUnique(() -> NO_METERS);
		InstanceAttributesParser parser = new InstanceAttributesParser(serviceId, MetadataKeys.DEFAULT_TAG, meters);
		return new AtlasLoadBalancer(serviceId,
				loadBalancerClientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class),
				settings.strategy().newBalancer(serviceId, parser, settings.allZeroWeights(), meters));
	}

}
