package dev.atlas.autoconfigure.overload;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.cloud.loadbalancer.blocking.retry.BlockingLoadBalancedRetryFactory;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * Overload protection in Spring Cloud's blocking retry path, when Spring Cloud
 * LoadBalancer is present and enabled and {@code atlas.enabled} is not {@code false}:
 * Atlas's retry policy for RestTemplate, RestClient and Feign, so that every retry asks
 * the service's budget and connect failures are requeued whatever the method. Each
 * service's budget lives in its load-balancer context
 * ({@link OverloadClientConfiguration}); its rules are the {@code retry} section
 * ({@link RetrySection}, {@code atlas.retry.*}); WebClient's and the gateway's retry
 * paths ask it through their own adapters. In a servlet or WebFlux application, the
 * overload marker of its answers ({@link OverloadMarkerFilter},
 * {@link ReactiveOverloadMarkerFilter}).
 *
 * @since 0.1.0
 */
@AutoConfiguration(afterName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass(ReactorServiceInstanceLoadBalancer.class)
@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
public final class AtlasOverloadAutoConfiguration {

	private AtlasOverloadAutoConfiguration() {
	}

	/**
	 * The overload marker of a servlet application's answers: bound to each inbound
	 * request, set when one of its load-balanced calls gives up for overload. Ordered
	 * first, so that it wraps every other filter.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(name = "jakarta.servlet.Filter")
	static class ServletMarkerConfiguration {

		@Bean
		FilterRegistrationBean<OverloadMarkerFilter> atlasOverloadMarkerFilter() {
			FilterRegistrationBean<OverloadMarkerFilter> registration = new FilterRegistrationBean<>(
					new OverloadMarkerFilter());
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
			registration.setName("atlasOverloadMarkerFilter");
			return registration;
		}

	}

	/**
	 * The overload marker of a WebFlux application's answers: bound to the Reactor
	 * context of each inbound request's handling, set when one of its load-balanced
	 * WebClient calls gives up for overload. Ordered first. Not in a Spring Cloud Gateway
	 * (a {@code RouteLocator} bean): the gateway answers its clients without the marker.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnMissingBean(type = "org.springframework.cloud.gateway.route.RouteLocator")
	static class ReactiveMarkerConfiguration {

		@Bean
		ReactiveOverloadMarkerFilter atlasReactiveOverloadMarkerFilter() {
			return new ReactiveOverloadMarkerFilter();
		}

	}

	/**
	 * Atlas's retry policy for RestTemplate, RestClient and Feign, when spring-retry is
	 * on the class path (Spring Cloud's blocking retry needs it).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.retry.support.RetryTemplate")
	static class BlockingRetryConfiguration {

		/**
		 * Puts {@link BudgetedRetryFactory} in place of Spring Cloud's
		 * {@code BlockingLoadBalancedRetryFactory} (matched by exact class: an
		 * application's own factory is kept).
		 * @param factory the load balancers of every service
		 * @return the post-processor
		 */
		@Bean
		static BeanPostProcessor atlasBudgetedRetryFactory(ObjectProvider<LoadBalancerClientFactory> factory) {
			return new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					if (bean.getClass() == BlockingLoadBalancedRetryFactory.class) {
						return new BudgetedRetryFactory((BlockingLoadBalancedRetryFactory) bean, factory.getObject());
					}
					return bean;
				}
			};
		}

	}

}
