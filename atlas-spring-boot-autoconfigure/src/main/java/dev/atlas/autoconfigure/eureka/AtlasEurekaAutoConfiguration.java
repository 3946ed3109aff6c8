package dev.atlas.autoconfigure.eureka;

import java.util.Arrays;

import dev.atlas.autoconfigure.affinity.PlaceholderZone;
import dev.atlas.autoconfigure.lifecycle.AtlasLifecycleAutoConfiguration;
import dev.atlas.autoconfigure.lifecycle.DeferredRegistrationAdvice;
import dev.atlas.autoconfigure.lifecycle.LifecycleProperties;
import dev.atlas.autoconfigure.lifecycle.LosslessRegistration;
import dev.atlas.autoconfigure.lifecycle.RegistrationMetadataSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.netflix.eureka.EurekaClientConfigBean;
import org.springframework.cloud.netflix.eureka.EurekaInstanceConfigBean;
import org.springframework.cloud.netflix.eureka.http.RestClientDiscoveryClientOptionalArgs;
import org.springframework.cloud.netflix.eureka.serviceregistry.EurekaAutoServiceRegistration;
import org.springframework.cloud.netflix.eureka.serviceregistry.EurekaRegistration;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

/**
 * Eureka-specific support, on when Spring Cloud Netflix's Eureka client is on the
 * classpath and Atlas is enabled. Eureka's auto-registration is not built on Spring
 * Cloud's {@code AbstractAutoServiceRegistration}, so without this Atlas's lifecycle
 * would not see it:
 * <ul>
 * <li>lossless online: the registration (Eureka's {@code start()} at lifecycle phase 0,
 * before the web server has even started when {@code server.port} is fixed, and its web
 * server event) is held back until the application is ready
 * ({@link DeferredRegistrationAdvice});</li>
 * <li>lossless offline: on shutdown Atlas sets this instance {@code DOWN} first, then
 * drains ({@link EurekaAutoRegistration}); a drain shorter than the registry fetch
 * interval is reported once at startup ({@link EurekaDrainCheck});</li>
 * <li>registration metadata ({@code atlas.registered-at}, the gray tag, the zone) reaches
 * Eureka's {@code InstanceInfo}, which copied the configured metadata when the client
 * started;</li>
 * <li>Eureka's {@code defaultZone}, the zone of an application that configured none, is
 * no zone for cluster affinity.</li>
 * </ul>
 * Callers follow Eureka through Spring Cloud's {@code HeartbeatEvent}, which the Eureka
 * client publishes after each registry fetch and Atlas's registry support already turns
 * into list refreshes.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = AtlasLifecycleAutoConfiguration.class,
		afterName = "org.springframework.cloud.netflix.eureka.EurekaClientAutoConfiguration")
@ConditionalOnClass({ EurekaAutoServiceRegistration.class, EurekaClientConfigBean.class })
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
public final class AtlasEurekaAutoConfiguration {

	private static final Logger log = LoggerFactory.getLogger(AtlasEurekaAutoConfiguration.class);

	/**
	 * Eureka's auto-registration, for {@code GracefulShutdown} and
	 * {@code LosslessRegistration}.
	 * @param registration the registration of this application
	 * @return the adapter, attached to the auto-registration when that bean is created
	 */
	@Bean
	EurekaAutoRegistration atlasEurekaAutoRegistration(ObjectProvider<EurekaRegistration> registration) {
		return new EurekaAutoRegistration(registration);
	}

	/**
	 * Attaches Eureka's auto-registration to its adapter and holds its registration back
	 * until the application is ready (when {@code atlas.lifecycle.register-when-ready} is
	 * on; the advice lets every call through otherwise).
	 * @param adapter the adapter
	 * @param lossless the coordinator, absent when registration is not held back
	 * @return the post-processor
	 */
	@Bean
	static BeanPostProcessor atlasEurekaRegistrationAdvice(ObjectProvider<EurekaAutoRegistration> adapter,
			ObjectProvider<LosslessRegistration> lossless) {
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (!(bean instanceof EurekaAutoServiceRegistration target)) {
					return bean;
				}
				EurekaAutoRegistration registration = adapter.getObject();
				registration.attach(target);
				return DeferredRegistrationAdvice.advise(target, registration, lossless, true);
			}
		};
	}

	/**
	 * Publishes Atlas's stamp to Eureka's {@code InstanceInfo} (marked dirty, so that the
	 * registration carries it).
	 * @return the sink
	 */
	@Bean
	RegistrationMetadataSink atlasEurekaMetadataSink() {
		return (registration, stamped) -> {
			if (registration instanceof EurekaRegistration eureka) {
				eureka.getApplicationInfoManager().registerAppMetadata(stamped);
			}
		};
	}

	/**
	 * Eureka's {@code defaultZone}, which Spring Cloud Netflix hands the load balancer as
	 * this application's zone when it configured none (no
	 * {@code eureka.instance.metadata-map.zone}, no
	 * {@code eureka.client.availability-zones} for its region): no zone for cluster
	 * affinity, which would otherwise prefer a zone no instance declares, count every
	 * call as a spill-over and warn.
	 * @param client the Eureka client's configuration
	 * @param instance this instance's Eureka configuration, if any
	 * @return the placeholder test
	 */
	@Bean
	@ConditionalOnBean(EurekaClientConfigBean.class)
	PlaceholderZone atlasEurekaDefaultZone(EurekaClientConfigBean client,
			ObjectProvider<EurekaInstanceConfigBean> instance) {
		return (zone) -> {
			if (!EurekaClientConfigBean.DEFAULT_ZONE.equals(zone)
					|| client.getAvailabilityZones().containsKey(client.getRegion())) {
				return false;
			}
			EurekaInstanceConfigBean own = instance.getIfUnique();
			return own == null || !zone.equals(own.getMetadataMap().get("zone"));
		};
	}

	/**
	 * Reports, once at startup, when Eureka's own client will send its calls to the
	 * server through the load balancer: it takes the application's
	 * {@code RestClient.Builder}, and when the only ones are {@code @LoadBalanced}, it
	 * takes one of those, resolves the server's host as a service id, and never registers
	 * (spring-cloud-netflix#4591). The fix is the application's: a plain
	 * {@code @Primary RestClient.Builder} bean, the load-balanced one injected with
	 * {@code @LoadBalanced}.
	 * @param beanFactory the application's bean factory
	 * @return the check
	 */
	@Bean
	@ConditionalOnClass(name = { "org.springframework.web.client.RestClient",
			"org.springframework.cloud.netflix.eureka.http.RestClientDiscoveryClientOptionalArgs" })
	static SmartInitializingSingleton atlasEurekaTransportCheck(ConfigurableListableBeanFactory beanFactory) {
		return () -> {
			if (beanFactory.getBeanNamesForType(RestClientDiscoveryClientOptionalArgs.class, true, false).length == 0) {
				return;
			}
			String[] builders = beanFactory.getBeanNamesForType(RestClient.Builder.class, true, false);
			if (builders.length > 0 && Arrays.stream(builders)
				.allMatch((name) -> beanFactory.findAnnotationOnBean(name, LoadBalanced.class, false) != null)) {
				log.warn("Every RestClient.Builder bean of this application is @LoadBalanced ({}), and Eureka's client "
						+ "takes one of them for its own calls to the Eureka server, whose host it then resolves as a "
						+ "service id: this application will not register nor fetch the registry "
						+ "(spring-cloud-netflix#4591). Add a plain @Primary RestClient.Builder bean and inject the "
						+ "load-balanced one with @LoadBalanced", String.join(", ", builders));
			}
		};
	}

	/**
	 * Reports, once at startup, a drain shorter than this application's registry fetch
	 * interval, when it registers with Eureka and Atlas owns its shutdown.
	 * @param clientConfig the Eureka client's configuration
	 * @param lifecycle the lifecycle properties of Atlas, absent when its lifecycle
	 * auto-configuration is excluded (then nothing is checked)
	 * @return the check
	 */
	@Bean
	@ConditionalOnBean(EurekaClientConfigBean.class)
	@ConditionalOnBooleanProperty(name = "atlas.lifecycle.graceful-shutdown", matchIfMissing = true)
	SmartInitializingSingleton atlasEurekaDrainCheck(EurekaClientConfigBean clientConfig,
			ObjectProvider<LifecycleProperties> lifecycle) {
		return () -> {
			LifecycleProperties properties = lifecycle.getIfAvailable();
			if (properties != null && clientConfig.isRegisterWithEureka()) {
				EurekaDrainCheck.warning(properties.getDrain(), clientConfig.getRegistryFetchIntervalSeconds())
					.ifPresent(log::warn);
			}
		};
	}

}
