package dev.atlas.autoconfigure.orca;

import java.util.function.Function;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.loadbalancer.StrategyRules;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.choice.WeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.orca.LoadReport;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.support.Scheduler;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.client.loadbalancer.LoadBalancerRequestTransformer;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Load reported by the providers themselves (ORCA), both sides:
 * <ul>
 * <li>callers: the {@code weighted-round-robin} strategy, each service's reported load
 * ({@link ReportedLoads}), and the request transformers that ask for reports on the calls
 * of services using that strategy (RestTemplate, RestClient, WebClient, Feign);</li>
 * <li>providers, with {@code atlas.load-report.enabled=true}: a servlet or WebFlux filter
 * that answers such requests with the {@value LoadReport#HEADER} header
 * ({@link LoadReporter});</li>
 * <li>a Spring Cloud Gateway removes the reports of the answers it passes on, unless
 * {@code atlas.load-report.gateway-forward=true}, and the request header asking for one
 * that its clients send (it asks only for the services using the strategy).</li>
 * </ul>
 * The caller side needs Atlas's load balancer (Spring Cloud LoadBalancer on); the
 * provider and gateway sides do not.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = AtlasLoadBalancerAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LoadReportProperties.class)
public final class AtlasLoadReportAutoConfiguration {

	/** The caller side, where Atlas is the load balancer. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean(Scheduler.class)
	@LoadBalancerClients(defaultConfiguration = LoadReportClientConfiguration.class)
	static class CallerConfiguration {

		/**
		 * The reported load of each service called, and which services ask for it.
		 * @param settings the rules of each service, in force
		 * @param scheduler runs the recomputations (Atlas's scheduler)
		 * @return the registry
		 */
		@Bean
		@ConditionalOnMissingBean
		ReportedLoads atlasReportedLoads(ObjectProvider<AtlasSettings> settings, Scheduler scheduler) {
			Function<String, StrategyRules> rules = (
					serviceId) -> settings.getObject().settingsFor(serviceId).get(StrategyRules.SECTION);
			// the rules in force, read at each recomputation: a runtime change applies
			// once committed
			return new ReportedLoads((serviceId) -> rules.apply(serviceId).weightedRoundRobin(),
					(serviceId) -> WeightedRoundRobinBalancer.NAME.equals(rules.apply(serviceId).strategy()),
					scheduler);
		}

		/**
		 * Registers the {@code weighted-round-robin} strategy (weights from the load the
		 * instances report, gRFC A58).
		 * @param loads the reported load of each service
		 * @return the factory
		 */
		@Bean
		@ConditionalOnMissingBean(name = "atlasWeightedRoundRobinStrategy")
		static StrategyFactory atlasWeightedRoundRobinStrategy(ObjectProvider<ReportedLoads> loads) {
			return WeightedRoundRobinBalancer.factory((serviceId) -> loads.getObject().of(serviceId));
		}

		@Bean
		@ConditionalOnClass(LoadBalancerRequestTransformer.class)
		LoadReportRequestTransformer atlasLoadReportRequestTransformer(ReportedLoads loads) {
			return new LoadReportRequestTransformer(loads);
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(WebClient.class)
		static class WebClientConfiguration {

			@Bean
			LoadReportClientRequestTransformer atlasLoadReportClientRequestTransformer(ReportedLoads loads) {
				return new LoadReportClientRequestTransformer(loads);
			}

		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(
				name = "org.springframework.cloud.openfeign.loadbalancer.LoadBalancerFeignRequestTransformer")
		static class FeignConfiguration {

			@Bean
			LoadReportFeignRequestTransformer atlasLoadReportFeignRequestTransformer(ReportedLoads loads) {
				return new LoadReportFeignRequestTransformer(loads);
			}

		}

	}

	/** The provider side, with {@code atlas.load-report.enabled=true}. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "atlas.load-report.enabled")
	static class ProviderConfiguration {

		@Bean
		LoadReporter atlasLoadReporter(LoadReportProperties properties, ObjectProvider<MeterRegistry> meters,
				ObjectProvider<ApplicationUtilization> application) {
			return new LoadReporter(properties.getWindow(),
					new CpuUtilization(meters.getIfAvailable(), properties.getUtilizationMeter()),
					application.getIfAvailable(), System::nanoTime);
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
		@ConditionalOnClass(name = "jakarta.servlet.Filter")
		static class ServletConfiguration {

			@Bean
			LoadReportServletFilter atlasLoadReportServletFilter(LoadReporter reporter) {
				return new LoadReportServletFilter(reporter);
			}

		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
		static class ReactiveConfiguration {

			@Bean
			LoadReportWebFilter atlasLoadReportWebFilter(LoadReporter reporter) {
				return new LoadReportWebFilter(reporter);
			}

		}

	}

	/**
	 * At a gateway: the clients' request for a report is removed, the gateway asks for
	 * one on the proxied requests of services using {@code weighted-round-robin}, reads
	 * it, and removes it from the answers unless
	 * {@code atlas.load-report.gateway-forward=true}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HttpHeadersFilter.class)
	static class GatewayConfiguration {

		@Bean
		HttpHeadersFilter atlasLoadReportRequestHeadersFilter(ObjectProvider<ReportedLoads> loads) {
			return LoadReportHeadersFilter.asking(loads.getIfAvailable());
		}

		@Bean
		HttpHeadersFilter atlasLoadReportResponseHeadersFilter(ObjectProvider<ReportedLoads> loads,
				LoadReportProperties properties) {
			return LoadReportHeadersFilter.reading(loads.getIfAvailable(), properties.isGatewayForward());
		}

	}

}
