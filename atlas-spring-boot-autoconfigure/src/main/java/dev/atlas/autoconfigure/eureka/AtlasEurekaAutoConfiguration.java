package dev.atlas.autoconfigure.eureka;

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
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.cloud.netflix.eureka.EurekaClientConfigBean;
import org.springframework.cloud.netflix.eureka.serviceregistry.EurekaAutoServiceRegistration;
import org.springframework.cloud.netflix.eureka.serviceregistry.EurekaRegistration;
import org.springframework.context.annotation.Bean;

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
 * started.</li>
 * </ul>
 * Callers follow Eureka through Spring Cloud's {@code HeartbeatEvent}, which the Eureka
 * client publishes after each registry fetch and Atlas's registry support already turns
 * into list refreshes.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = AtlasLifecycleAutoConfiguration.class)
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
	 * Reports, once at startup, a drain shorter than this application's registry fetch
	 * interval, when it registers with Eureka and Atlas owns its shutdown.
	 * @param clientConfig the Eureka client's configuration
	 * @param lifecycle the lifecycle properties of Atlas
	 * @return the check
	 */
	@Bean
	@ConditionalOnBean(EurekaClientConfigBean.class)
	@ConditionalOnBooleanProperty(name = "atlas.lifecycle.graceful-shutdown", matchIfMissing = true)
	SmartInitializingSingleton atlasEurekaDrainCheck(EurekaClientConfigBean clientConfig,
			LifecycleProperties lifecycle) {
		return () -> {
			if (clientConfig.isRegisterWithEureka()) {
				EurekaDrainCheck.warning(lifecycle.getDrain(), clientConfig.getRegistryFetchIntervalSeconds())
					.ifPresent(log::warn);
			}
		};
	}

}
