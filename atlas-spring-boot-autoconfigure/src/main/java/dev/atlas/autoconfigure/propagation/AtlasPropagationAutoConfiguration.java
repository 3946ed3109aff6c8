package dev.atlas.autoconfigure.propagation;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;

import dev.atlas.autoconfigure.settings.CallerSection;
import dev.atlas.loadbalancer.context.RoutingContextAccessor;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshotFactory;
import reactor.core.publisher.Hooks;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.cloud.client.loadbalancer.LoadBalancerRequestTransformer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Carries the routing headers ({@code atlas.propagation.headers}, the gray header and the
 * hash-key header) of every inbound request to every outbound load-balanced call made on
 * its behalf, on the same thread, on other threads and in reactive chains, and to no
 * other call:
 * <ul>
 * <li>in: a servlet filter or a WebFlux {@code WebFilter} captures them (the servlet
 * filter restores the thread's previous context afterwards, so nothing leaks into a
 * reused thread);</li>
 * <li>across threads: Micrometer's context-propagation, through a {@link TaskDecorator}
 * (applied by Spring Boot, together with the application's own decorators, to its
 * {@code @Async} and task executors), the executors of Resilience4j circuit breakers
 * (Feign through Spring Cloud CircuitBreaker), Reactor's {@code Context} on reactive
 * paths, and Reactor's automatic context propagation when
 * {@code atlas.propagation.reactor-automatic} is {@code true};</li>
 * <li>out: Spring Cloud's load-balancer request transformers, which it applies only to
 * load-balanced calls, once the instance is chosen, in its plain and its retrying
 * variants: a {@link LoadBalancerRequestTransformer} (RestTemplate, RestClient), a
 * {@code LoadBalancerClientRequestTransformer} (WebClient; a filter placed first on every
 * {@code WebClient.Builder} bean captures the context into a request attribute, which
 * never leaves the process) and a {@code LoadBalancerFeignRequestTransformer} (Feign). A
 * call to a fixed URL (a plain client, a {@code @FeignClient} with {@code url}) gets no
 * routing header.</li>
 * </ul>
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass({ ContextRegistry.class, LoadBalancerRequestTransformer.class })
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "atlas.propagation.enabled", matchIfMissing = true)
@EnableConfigurationProperties(PropagationProperties.class)
public final class AtlasPropagationAutoConfiguration {

	static {
		ContextRegistry.getInstance().registerThreadLocalAccessor(new RoutingContextAccessor());
	}

	/**
	 * The caller-level section {@code atlas.propagation}, bound and checked with the
	 * other caller-level sections on every runtime change.
	 * @return the section
	 */
	@Bean
	static CallerSection<?> atlasPropagationCallerSection() {
		return PropagationSection.CALLER;
	}

	@Bean
	PropagatedHeaders atlasPropagatedHeaders(PropagationProperties propagation,
			ObjectProvider<PropagatedHeaderSource> sources) {
		return new PropagatedHeaders(headerNames(propagation.getHeaders(), sources.orderedStream().toList()));
	}

	/**
	 * Keeps the propagated headers on the rules in force after a runtime change.
	 * @param headers the propagated headers
	 * @param sources the header names the concerns need carried
	 * @return the listener
	 */
	@Bean
	PropagatedHeadersListener atlasPropagatedHeadersListener(PropagatedHeaders headers,
			ObjectProvider<PropagatedHeaderSource> sources) {
		return new PropagatedHeadersListener(headers, sources);
	}

	/**
	 * The headers carried from inbound requests to outbound calls: the configured ones,
	 * then those of every source (the gray header, the hash-key header of the caller and
	 * of every service that sets its own, ...).
	 * @param configured {@code atlas.propagation.headers}
	 * @param sources the sources, in order
	 * @return trimmed lower-case names in that order, without blanks or duplicates, never
	 * {@code null}
	 */
	static Set<String> headerNames(Collection<String> configured, Collection<PropagatedHeaderSource> sources) {
		Set<String> headers = new LinkedHashSet<>();
		configured.forEach((header) -> PropagatedHeaders.add(headers, header));
		sources.forEach((source) -> source.headerNames().forEach((header) -> PropagatedHeaders.add(headers, header)));
		return headers;
	}

	/**
	 * Spring Boot composes every {@link TaskDecorator} bean into its executors'
	 * decorator, so this one works beside the application's own (an MDC-copying one,
	 * say); it steps aside only for an application
	 * {@link ContextPropagatingTaskDecorator}, which already carries every registered
	 * context.
	 */
	@Bean
	@ConditionalOnMissingBean(ContextPropagatingTaskDecorator.class)
	ContextPropagatingTaskDecorator atlasContextPropagatingTaskDecorator() {
		// clearMissing: a task submitted without a routing context runs without one, even
		// on a thread that
		// had one before.
		return new ContextPropagatingTaskDecorator(ContextSnapshotFactory.builder().clearMissing(true).build());
	}

	@Bean
	RoutingContextRequestTransformer atlasRoutingContextRequestTransformer(PropagatedHeaders headers) {
		return new RoutingContextRequestTransformer(headers);
	}

	/**
	 * Resilience4j circuit breakers (Spring Cloud CircuitBreaker) run their calls on
	 * executors that carry the routing context ({@link Resilience4jContextPropagation}).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(
			name = "org.springframework.cloud.circuitbreaker.resilience4j.Resilience4JCircuitBreakerFactory")
	static class Resilience4jConfiguration {

		@Bean
		static Resilience4jContextPropagation atlasResilience4jContextPropagation() {
			return new Resilience4jContextPropagation();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Hooks.class)
	@ConditionalOnBooleanProperty(name = "atlas.propagation.reactor-automatic")
	static class ReactorConfiguration {

		ReactorConfiguration() {
			Hooks.enableAutomaticContextPropagation();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(name = "jakarta.servlet.Filter")
	static class ServletConfiguration {

		@Bean
		FilterRegistrationBean<RoutingContextServletFilter> atlasRoutingContextFilter(PropagatedHeaders headers,
				ObjectProvider<LaneTagger> lanes) {
			FilterRegistrationBean<RoutingContextServletFilter> registration = new FilterRegistrationBean<>(
					new RoutingContextServletFilter(headers, lanes.getIfAvailable()));
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
			return registration;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	static class ReactiveConfiguration {

		@Bean
		RoutingContextWebFilter atlasRoutingContextWebFilter(PropagatedHeaders headers,
				ObjectProvider<LaneTagger> lanes) {
			return new RoutingContextWebFilter(headers, lanes.getIfAvailable());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(WebClient.class)
	static class WebClientConfiguration {

		@Bean
		static BeanPostProcessor atlasWebClientBuilderPostProcessor() {
			return new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					if (bean instanceof WebClient.Builder builder) {
						builder.filters((filters) -> {
							if (filters.stream().noneMatch(RoutingContextExchangeFilter.class::isInstance)) {
								filters.add(0, new RoutingContextExchangeFilter());
							}
						});
					}
					return bean;
				}
			};
		}

		@Bean
		RoutingContextClientRequestTransformer atlasRoutingContextClientRequestTransformer(PropagatedHeaders headers) {
			return new RoutingContextClientRequestTransformer(headers);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.cloud.openfeign.loadbalancer.LoadBalancerFeignRequestTransformer")
	static class FeignConfiguration {

		@Bean
		RoutingContextFeignRequestTransformer atlasRoutingContextFeignRequestTransformer(PropagatedHeaders headers) {
			return new RoutingContextFeignRequestTransformer(headers);
		}

	}

}
