package dev.atlas.autoconfigure.gateway;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.propagation.LaneTagger;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Atlas in Spring Cloud Gateway Server WebFlux: the lane rules applied to requests routed
 * to {@code lb://} services ({@link LaneGatewayFilter}), and a {@code Retry} filter's
 * retry sent to another instance than the one that just failed
 * ({@link GatewayRetryAvoidance}). The gateway already balances through Atlas (its
 * {@code ReactiveLoadBalancerClientFilter} uses the same {@code ReactorLoadBalancer} per
 * service). Active when the gateway is on the class path and {@code atlas.enabled} is not
 * {@code false}.
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

}
