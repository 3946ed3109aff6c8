package dev.atlas.autoconfigure.nacos;

import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerClientConfiguration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Nacos-specific support, on when Spring Cloud Alibaba's Nacos discovery is on the
 * classpath and Atlas is enabled. Atlas reads Nacos's metadata ({@code nacos.weight},
 * {@code nacos.cluster}, {@code nacos.healthy}) in the engine, with no Nacos dependency;
 * this configuration handles what only a Nacos application has.
 *
 * <p>
 * When {@code spring.cloud.loadbalancer.nacos.enabled=true} also turns on Spring Cloud
 * Alibaba's {@code NacosLoadBalancer}, startup states that Atlas is in charge (it is, see
 * {@code AtlasLoadBalancerClientConfiguration}) and how to choose the other one. Spring
 * Cloud Alibaba's shutdown wait is replaced by Atlas's drain. Nacos's pushed instance
 * changes evict the load balancer's cached list of that service at once
 * ({@link NacosInstanceChangeSource}).
 */
@AutoConfiguration(after = AtlasLoadBalancerAutoConfiguration.class,
		afterName = { "com.alibaba.cloud.nacos.discovery.NacosDiscoveryAutoConfiguration",
				"com.alibaba.cloud.nacos.NacosServiceAutoConfiguration" })
@ConditionalOnClass(name = "com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancer")
@ConditionalOnBean(AtlasLoadBalancerAutoConfiguration.class)
public class AtlasNacosAutoConfiguration {

	private static final Logger log = LoggerFactory.getLogger(AtlasNacosAutoConfiguration.class);

	/**
	 * Atlas owns the shutdown sequence (deregister, refuse traffic, drain
	 * {@code atlas.lifecycle.drain}): Spring Cloud Alibaba's own wait after
	 * deregistration ({@code graceful-shutdown-wait-time}, 10 s) would come on top of it,
	 * so it is set to 0. Spring Cloud's refresh rebinds the properties bean (and this
	 * runs again): the value is set to 0 again each time, and said once per configured
	 * value.
	 */
	@Bean
	@ConditionalOnBooleanProperty(name = "atlas.lifecycle.graceful-shutdown", matchIfMissing = true)
	@ConditionalOnClass(name = "com.alibaba.cloud.nacos.NacosDiscoveryProperties")
	static BeanPostProcessor atlasOwnsNacosShutdownWait() {
		AtomicReference<@Nullable Integer> said = new AtomicReference<>();
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof com.alibaba.cloud.nacos.NacosDiscoveryProperties nacos) {
					Integer wait = nacos.getGracefulShutdownWaitTime();
					if (wait != null && wait > 0) {
						if (!wait.equals(said.getAndSet(wait))) {
							log.info("Atlas owns the shutdown sequence: Spring Cloud Alibaba's "
									+ "graceful-shutdown-wait-time ({} ms) is replaced by atlas.lifecycle.drain", wait);
						}
						nacos.setGracefulShutdownWaitTime(0);
					}
				}
				return bean;
			}
		};
	}

	@Bean
	@ConditionalOnBean({ com.alibaba.cloud.nacos.NacosServiceManager.class,
			com.alibaba.cloud.nacos.NacosDiscoveryProperties.class })
	@ConditionalOnBooleanProperty(name = "atlas.registry.refresh-on-events", matchIfMissing = true)
	NacosInstanceChangeSource atlasNacosInstanceChangeSource(com.alibaba.cloud.nacos.NacosServiceManager nacos,
			com.alibaba.cloud.nacos.NacosDiscoveryProperties properties) {
		return new NacosInstanceChangeSource(nacos, properties);
	}

	@Bean
	@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.nacos.enabled")
	SmartInitializingSingleton atlasNacosLoadBalancerConflictReport() {
		return () -> log.warn("Both Atlas and Spring Cloud Alibaba's NacosLoadBalancer are enabled "
				+ "(spring.cloud.loadbalancer.nacos.enabled=true). Atlas is the load balancer in charge of every "
				+ "@LoadBalanced client and honours Nacos weights itself; remove that property, or set "
				+ "atlas.enabled=false to use NacosLoadBalancer instead.");
	}

}
