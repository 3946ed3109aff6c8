package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.settings.RegistrationMetadataContributor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;

/**
 * Lossless online of this application in its registry: registration metadata for callers
 * ({@link RegistrationMetadata}) and registration only once the application is ready
 * ({@link LosslessRegistration}). Both hook into Spring Cloud's generic service-registry
 * SPI through class-based proxies (the registries' beans are concrete classes that other
 * beans inject by type), so they work for Nacos and ZooKeeper alike.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass({ ServiceRegistry.class, ProxyFactory.class })
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LifecycleProperties.class)
public final class AtlasLifecycleAutoConfiguration {

	/**
	 * The registration stamper, with the metadata every concern contributes (the gray
	 * tag, the cluster), collected once, here, in order.
	 * @param contributors the concerns' contributions
	 * @param sinks the registries that must be told of the stamp (Eureka's)
	 * @return the stamper
	 */
	@Bean
	RegistrationMetadata atlasRegistrationMetadata(ObjectProvider<RegistrationMetadataContributor> contributors,
			ObjectProvider<RegistrationMetadataSink> sinks) {
		Map<String, String> extra = new LinkedHashMap<>();
		contributors.orderedStream().forEach((contributor) -> extra.putAll(contributor.metadata()));
		return new RegistrationMetadata(extra, Clock.systemUTC(), sinks.orderedStream().toList());
	}

	@Bean
	RegistrationStatus atlasRegistrationStatus(ObjectProvider<DiscoveryClient> discoveryClient) {
		return new RegistrationStatus((serviceId) -> {
			DiscoveryClient discovery = discoveryClient.getIfUnique();
			return (discovery != null) ? discovery.getInstances(serviceId) : null;
		}, Clock.systemUTC(), Duration.ofSeconds(1));
	}

	/**
	 * Advises every {@link ServiceRegistry} bean with {@link ServiceRegistryInterceptor}:
	 * registration metadata, what the registry really accepted, and a {@code close()}
	 * held back until the web server has stopped.
	 * <p>
	 * Not on Spring Cloud's {@code InstancePreRegisteredEvent}, although it carries the
	 * registration: Spring Cloud ZooKeeper builds its registration's instance, and with
	 * it the metadata map, only inside {@code register()}, once the port is known; at the
	 * event {@code getMetadata()} is an immutable empty map (spring-cloud-zookeeper
	 * 5.0.2, {@code ServiceInstanceRegistration}), so the stamp would be lost. Nacos's
	 * metadata is writable at the event; ZooKeeper's is not until here.
	 */
	@Bean
	static BeanPostProcessor atlasServiceRegistryAdvice(ObjectProvider<RegistrationMetadata> metadata,
			ObjectProvider<RegistrationStatus> status, ObjectProvider<DeferredRegistryClose> closes) {
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (!(bean instanceof ServiceRegistry<?>)) {
					return bean;
				}
				return DeferredRegistrationAdvice.proxy(bean, new ServiceRegistryInterceptor(metadata, status, closes));
			}
		};
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(AbstractAutoServiceRegistration.class)
	@ConditionalOnBooleanProperty(name = "atlas.lifecycle.graceful-shutdown", matchIfMissing = true)
	static class GracefulShutdownConfiguration {

		@Bean
		GracefulShutdown atlasGracefulShutdown(ApplicationContext context, LifecycleProperties lifecycle,
				ObjectProvider<AbstractAutoServiceRegistration<?>> registrations,
				ObjectProvider<AutoRegistration> otherRegistrations, ObjectProvider<LosslessRegistration> lossless,
				ObjectProvider<MeterRegistry> meterRegistry, ObjectProvider<RegistrationMetadata> registrationMetadata,
				Environment environment) {
			List<AutoRegistration> all = new ArrayList<>();
			registrations.orderedStream().map(AutoRegistration::of).forEach(all::add);
			otherRegistrations.orderedStream().forEach(all::add);
			return new GracefulShutdown(context, all, lossless.getIfAvailable(), lifecycle.getDrain(),
					lifecycle.getDeregisterTimeout(), meterRegistry.getIfUnique(CompositeMeterRegistry::new),
					Clock.systemUTC(), GracefulShutdown.Sleeper.THREAD_SLEEP,
					CloudPlatform.getActive(environment) == CloudPlatform.KUBERNETES,
					registrationMetadata.getIfAvailable());
		}

		/** Holds back the registry client's close until the web server has stopped. */
		@Bean
		DeferredRegistryClose atlasDeferredRegistryClose(ObjectProvider<GracefulShutdown> shutdown) {
			return new DeferredRegistryClose(() -> {
				GracefulShutdown sequence = shutdown.getIfAvailable();
				return sequence != null && sequence.state() != GracefulShutdown.State.SERVING;
			});
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(name = { "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
				"org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType" })
		static class PreStopEndpointConfiguration {

			@Bean
			@ConditionalOnAvailableEndpoint
			PreStopEndpoint atlasPreStopEndpoint(GracefulShutdown shutdown) {
				return new PreStopEndpoint(shutdown);
			}

			/**
			 * Fails startup when the endpoint is exposed over HTTP on the application's
			 * own port, unless {@code atlas.lifecycle.prestop.allow-on-server-port=true}
			 * ({@link PreStopExposureGuard}). Never lazy, so that the check runs at
			 * startup even with lazy initialization.
			 */
			@Bean
			@Lazy(false)
			@ConditionalOnWebApplication
			@ConditionalOnAvailableEndpoint(endpoint = PreStopEndpoint.class, exposure = EndpointExposure.WEB)
			PreStopExposureGuard atlasPreStopExposureGuard(Environment environment, LifecycleProperties lifecycle) {
				return new PreStopExposureGuard(ManagementPortType.get(environment),
						lifecycle.getPrestop().isAllowOnServerPort());
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ AbstractAutoServiceRegistration.class, WebServerInitializedEvent.class })
	@ConditionalOnBooleanProperty(name = "atlas.lifecycle.register-when-ready", matchIfMissing = true)
	static class RegisterWhenReadyConfiguration {

		@Bean
		LosslessRegistration atlasLosslessRegistration(ApplicationContext context, LifecycleProperties lifecycle) {
			return new LosslessRegistration(context, lifecycle.getRegisterDelay(),
					LosslessRegistration.Scheduler.DELAYED_EXECUTOR);
		}

		/**
		 * Routes Spring Cloud's auto-registration's
		 * {@code onApplicationEvent(WebServerInitializedEvent)} through
		 * {@link LosslessRegistration#defer} ({@link DeferredRegistrationAdvice}).
		 */
		@Bean
		static BeanPostProcessor atlasDeferredRegistration(ObjectProvider<LosslessRegistration> lossless) {
			return new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					if (!(bean instanceof AbstractAutoServiceRegistration<?> target)) {
						return bean;
					}
					return DeferredRegistrationAdvice.advise(target, AutoRegistration.of(target), lossless, false);
				}
			};
		}

	}

}
