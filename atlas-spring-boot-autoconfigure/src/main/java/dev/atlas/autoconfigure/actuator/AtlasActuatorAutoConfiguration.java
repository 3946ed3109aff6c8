package dev.atlas.autoconfigure.actuator;

import dev.atlas.autoconfigure.lifecycle.AtlasLifecycleAutoConfiguration;
import dev.atlas.autoconfigure.lifecycle.GracefulShutdown;
import dev.atlas.autoconfigure.lifecycle.LosslessRegistration;
import dev.atlas.autoconfigure.lifecycle.RegistrationMetadata;
import dev.atlas.autoconfigure.lifecycle.RegistrationStatus;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.endpoint.RefreshEndpoint;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The {@code atlas} actuator endpoint ({@link AtlasEndpoint}), and a warning when Spring
 * Cloud's {@code refresh} endpoint, which now changes routing rules, is reachable by the
 * application's clients.
 */
@AutoConfiguration(after = { AtlasLoadBalancerAutoConfiguration.class, AtlasLifecycleAutoConfiguration.class },
		afterName = "org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean({ AtlasLoadBalancerAutoConfiguration.class, LoadBalancerClientFactory.class })
public class AtlasActuatorAutoConfiguration {

	@Bean
	@ConditionalOnAvailableEndpoint
	AtlasEndpoint atlasEndpoint(LoadBalancerClientFactory clients, ObjectProvider<RegistrationMetadata> registration,
			ObjectProvider<RegistrationStatus> status, ObjectProvider<LosslessRegistration> lossless,
			ObjectProvider<GracefulShutdown> shutdown) {
		return new AtlasEndpoint(clients, registration, status, lossless, shutdown);
	}

	/**
	 * {@code /actuator/refresh} applies {@code atlas.*} changes at runtime, so whoever
	 * can call it can move this application's traffic: one WARN at startup when it is
	 * exposed over HTTP on the application's own port, which its clients reach.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.cloud.endpoint.RefreshEndpoint",
			"org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType" })
	@ConditionalOnWebApplication
	static class RefreshExposureConfiguration {

		private static final Logger log = LoggerFactory.getLogger(RefreshExposureConfiguration.class);

		@Bean
		@ConditionalOnAvailableEndpoint(endpoint = RefreshEndpoint.class, exposure = EndpointExposure.WEB)
		SmartInitializingSingleton atlasRefreshExposureWarning(Environment environment) {
			return () -> {
				if (ManagementPortType.get(environment) == ManagementPortType.SAME) {
					log.warn("/actuator/refresh is exposed over HTTP on the application's own port "
							+ "(management.server.port is not set, or equals server.port): any client that reaches "
							+ "the application can apply changed atlas.* routing rules. Set management.server.port "
							+ "to a port clients cannot reach, or remove refresh from "
							+ "management.endpoints.web.exposure.include.");
				}
			};
		}

	}

}
