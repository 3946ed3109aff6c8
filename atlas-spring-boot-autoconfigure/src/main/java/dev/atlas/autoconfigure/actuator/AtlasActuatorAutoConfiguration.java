package dev.atlas.autoconfigure.actuator;

import dev.atlas.autoconfigure.lifecycle.AtlasLifecycleAutoConfiguration;
import dev.atlas.autoconfigure.lifecycle.GracefulShutdown;
import dev.atlas.autoconfigure.lifecycle.LosslessRegistration;
import dev.atlas.autoconfigure.lifecycle.RegistrationMetadata;
import dev.atlas.autoconfigure.lifecycle.RegistrationStatus;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;

/** The {@code atlas} actuator endpoint ({@link AtlasEndpoint}). */
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

}
