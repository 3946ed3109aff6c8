package dev.atlas.autoconfigure.gateway;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.propagation.LaneTagger;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.cloud.gateway.config.GatewayLoadBalancerProperties;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Atlas in Spring Cloud Gateway Server WebFlux: the lane rules applied to requests routed
 * to {@code lb://} services ({@link LaneGatewayFilter}), and a {@code Retry} filter's
 * retry sent to another instance than the one that just failed
 * ({@link GatewayRetryAvoidance}). The gateway already balances through Atlas (its
 * {@code ReactiveLoadBalancerClientFilter} uses the same {@code ReactorLoadBalancer} per
 * service); {@link AtlasGatewayLoadBalancerFilter} takes that filter's place, so that a
 * client that goes away ends its request's lifecycle and IPv6 instances are reached
 * whatever the URI. Active when the gateway is on the class path and
 * {@code atlas.enabled} is not {@code false}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = AtlasLoadBalancerAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter")
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@ConditionalOnBean(LaneTagger.class)
@Import(AtlasGatewayRetryConfiguration.class)
public final class AtlasGatewayAutoConfiguration {

	@Bean
	LaneGatewayFilter atlasLaneGatewayFilter(LaneTagger lanes) {
		return new LaneGatewayFilter(lanes);
	}

	/**
	 * Puts {@link AtlasGatewayLoadBalancerFilter} in place of the gateway's
	 * {@code ReactiveLoadBalancerClientFilter} (matched by exact class: an application's
	 * own subclass is kept).
	 * @param clientFactory the load balancers of every service
	 * @param properties the gateway's load-balancer properties
	 * @return the post-processor
	 */
	@Bean
	static BeanPostProcessor atlasGatewayLoadBalancerFilter(ObjectProvider<LoadBalancerClientFactory> clientFactory,
			ObjectProvider<GatewayLoadBalancerProperties> properties) {
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean.getClass() == ReactiveLoadBalancerClientFilter.class) {
					return new AtlasGatewayLoadBalancerFilter(clientFactory.getObject(), properties.getObject());
				}
				return bean;
			}
		};
	}

}
