package dev.atlas.autoconfigure.client;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClientsProperties;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactorLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.blocking.client.BlockingLoadBalancerClient;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Adapts Spring Cloud's load-balanced clients to Atlas, when Spring Cloud LoadBalancer is
 * present and enabled and {@code atlas.enabled} is not {@code false}: the blocking client
 * and the WebClient filters report why Atlas chose no instance, and the statistics
 * lifecycle keys its gauges by instance identity. Each replaces Spring Cloud's bean of
 * the exact class only, so an application's own client, filter or lifecycle is kept.
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = LoadBalancerAutoConfiguration.class)
@ConditionalOnClass(ReactorServiceInstanceLoadBalancer.class)
@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
public final class AtlasClientAutoConfiguration {

	private AtlasClientAutoConfiguration() {
	}

	/**
	 * Spring Cloud's {@code LoadBalancerClientFactory}, built as Spring Cloud builds it,
	 * as an {@link AtlasLoadBalancerClientFactory}: the look-ups of a service's load
	 * balancer and lifecycle beans that every load-balanced request makes are answered
	 * from a cache. An application's own factory bean wins.
	 * @param properties the per-client properties of Spring Cloud LoadBalancer
	 * @param configurations the {@code @LoadBalancerClient(s)} configurations
	 * @return the factory
	 */
	@Bean
	@ConditionalOnMissingBean
	static LoadBalancerClientFactory loadBalancerClientFactory(LoadBalancerClientsProperties properties,
			ObjectProvider<List<LoadBalancerClientSpecification>> configurations) {
		AtlasLoadBalancerClientFactory factory = new AtlasLoadBalancerClientFactory(properties);
		factory.setConfigurations(configurations.getIfAvailable(List::of));
		return factory;
	}

	/**
	 * Puts {@link AtlasBlockingLoadBalancerClient} in place of Spring Cloud's
	 * {@code BlockingLoadBalancerClient} (matched by exact class: an application's own
	 * {@code LoadBalancerClient} is kept), so that RestTemplate, RestClient and Feign
	 * callers see a {@code NoInstanceAvailableException} naming the service and the
	 * reason when Atlas chooses none.
	 * @param factory the load balancers of every service
	 * @return the post-processor
	 */
	@Bean
	static BeanPostProcessor atlasNoInstanceBlockingClient(ObjectProvider<LoadBalancerClientFactory> factory) {
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean.getClass() == BlockingLoadBalancerClient.class) {
					return new AtlasBlockingLoadBalancerClient(factory.getObject());
				}
				return bean;
			}
		};
	}

	/**
	 * Puts Atlas's variants of Spring Cloud's WebClient load-balancer filters in place of
	 * Spring Cloud's (matched by exact class), so that WebClient callers see a
	 * {@code NoInstanceAvailableException} naming the service and the reason when Atlas
	 * chooses none, instead of a 503.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.web.reactive.function.client.WebClient")
	static class NoInstanceWebClientConfiguration {

		@Bean
		static BeanPostProcessor atlasNoInstanceWebClientFilters(ObjectProvider<LoadBalancerClientFactory> factory,
				ObjectProvider<LoadBalancerClientRequestTransformer> transformers,
				ObjectProvider<LoadBalancerRetryPolicy.Factory> retryPolicies) {
			return new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					if (bean.getClass() == ReactorLoadBalancerExchangeFilterFunction.class) {
						return new AtlasReactiveNoInstanceFilters.Plain(factory.getObject(),
								transformers.orderedStream().toList());
					}
					if (bean.getClass() == RetryableLoadBalancerExchangeFilterFunction.class) {
						return new AtlasReactiveNoInstanceFilters.Retrying(retryPolicies.getObject(),
								factory.getObject(), transformers.orderedStream().toList());
					}
					return bean;
				}
			};
		}

	}

	/**
	 * Puts {@link LoadBalancerRequestMeters} in place of Spring Cloud's
	 * {@code MicrometerStatsLoadBalancerLifecycle} (matched by exact class: an
	 * application's own subclass is kept): the same meters, one gauge per instance
	 * identity, series removed with the instances that left, no raw-path {@code uri} tag,
	 * no callback that throws.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "io.micrometer.core.instrument.MeterRegistry",
			"org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle" })
	static class StatsConfiguration {

		@Bean
		static BeanPostProcessor atlasBoundedRequestMeters(ObjectProvider<MeterRegistry> meterRegistry,
				ObjectProvider<LoadBalancerClientFactory> factory) {
			return new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					if (bean.getClass() == MicrometerStatsLoadBalancerLifecycle.class) {
						return new LoadBalancerRequestMeters(meterRegistry.getObject(), factory.getObject());
					}
					return bean;
				}
			};
		}

	}

}
