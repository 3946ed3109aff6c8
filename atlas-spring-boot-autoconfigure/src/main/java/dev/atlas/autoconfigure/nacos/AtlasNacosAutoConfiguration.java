package dev.atlas.autoconfigure.nacos;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Nacos-specific support, on when Spring Cloud Alibaba's Nacos discovery is on the classpath and Atlas is
 * enabled. Atlas reads Nacos's metadata ({@code nacos.weight}, {@code nacos.cluster},
 * {@code nacos.healthy}) in the engine, with no Nacos dependency; this configuration handles what only a
 * Nacos application has.
 *
 * <p>Today: when {@code spring.cloud.loadbalancer.nacos.enabled=true} also turns on Spring Cloud
 * Alibaba's {@code NacosLoadBalancer}, startup states that Atlas is in charge (it is, see
 * {@code AtlasLoadBalancerClientConfiguration}) and how to choose the other one.
 */
@AutoConfiguration(after = AtlasLoadBalancerAutoConfiguration.class)
@ConditionalOnClass(name = "com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancer")
@ConditionalOnBean(AtlasLoadBalancerAutoConfiguration.class)
public class AtlasNacosAutoConfiguration {

	private static final Logger log = LoggerFactory.getLogger(AtlasNacosAutoConfiguration.class);

	@Bean
	@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.nacos.enabled")
	SmartInitializingSingleton atlasNacosLoadBalancerConflictReport() {
		return () -> log.warn("Both Atlas and Spring Cloud Alibaba's NacosLoadBalancer are enabled "
				+ "(spring.cloud.loadbalancer.nacos.enabled=true). Atlas is the load balancer in charge of every "
				+ "@LoadBalanced client and honours Nacos weights itself; remove that property, or set "
				+ "atlas.enabled=false to use NacosLoadBalancer instead.");
	}

}
