package dev.atlas.autoconfigure.actuator;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

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
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The {@code atlas} actuator endpoint ({@link AtlasEndpoint}), and a warning when Spring
 * Cloud's endpoints that change the Environment (so, now, routing rules) are reachable by
 * the application's clients.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = { AtlasLoadBalancerAutoConfiguration.class, AtlasLifecycleAutoConfiguration.class },
		afterName = "org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean({ AtlasLoadBalancerAutoConfiguration.class, LoadBalancerClientFactory.class })
public final class AtlasActuatorAutoConfiguration {

	@Bean
	@ConditionalOnAvailableEndpoint
	AtlasEndpoint atlasEndpoint(LoadBalancerClientFactory clients, ObjectProvider<RegistrationMetadata> registration,
			ObjectProvider<RegistrationStatus> status, ObjectProvider<LosslessRegistration> lossless,
			ObjectProvider<GracefulShutdown> shutdown) {
		return new AtlasEndpoint(clients, registration, status, lossless, shutdown);
	}

	/**
	 * Spring Cloud's endpoints that change the Environment ({@code refresh},
	 * {@code busrefresh}, {@code busenv}, and {@code env} when its POST is enabled) now
	 * apply {@code atlas.*} changes at runtime, so whoever can call them can move this
	 * application's traffic: one WARN at startup when one is exposed over HTTP on the
	 * application's own port, which its clients reach.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.cloud.context.environment.EnvironmentChangeEvent",
			"org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType" })
	@ConditionalOnWebApplication
	static class EnvironmentEndpointsExposureConfiguration {

		private static final Logger log = LoggerFactory.getLogger(EnvironmentEndpointsExposureConfiguration.class);

		@Bean
		SmartInitializingSingleton atlasEnvironmentEndpointsExposureWarning(Environment environment) {
			return () -> {
				List<String> exposed = exposedEnvironmentEndpoints(environment);
				if (!exposed.isEmpty() && ManagementPortType.get(environment) == ManagementPortType.SAME) {
					log.warn("{} exposed over HTTP on the application's own port (management.server.port is not set, "
							+ "or equals server.port): any client that reaches the application can change atlas.* "
							+ "routing rules. Set management.server.port to a port clients cannot reach, or remove "
							+ "them from management.endpoints.web.exposure.include.",
							exposed.stream().map((id) -> "/actuator/" + id).toList());
				}
			};
		}

		/**
		 * The endpoints that change the Environment, exposed over HTTP with write access
		 * ({@code unrestricted}); Spring Cloud Bus's only when the bus is there.
		 */
		static List<String> exposedEnvironmentEndpoints(Environment environment) {
			Binder binder = Binder.get(environment);
			Set<String> include = binder.bind("management.endpoints.web.exposure.include", Bindable.setOf(String.class))
				.orElse(Set.of("health"));
			Set<String> exclude = binder.bind("management.endpoints.web.exposure.exclude", Bindable.setOf(String.class))
				.orElse(Set.of());
			boolean bus = ClassUtils.isPresent("org.springframework.cloud.bus.BusAutoConfiguration", null);
			List<String> exposed = new ArrayList<>();
			for (String id : List.of("refresh", "busrefresh", "busenv", "env")) {
				boolean changes = "env".equals(id)
						? environment.getProperty("management.endpoint.env.post.enabled", Boolean.class, false)
						: (!id.startsWith("bus") || bus);
				boolean included = (include.contains("*") || include.contains(id))
						&& !(exclude.contains("*") || exclude.contains(id));
				if (changes && included && writable(environment, id)) {
					exposed.add(id);
				}
			}
			return exposed;
		}

		/** Whether an endpoint's access lets a POST through (Boot's {@code access}). */
		private static boolean writable(Environment environment, String id) {
			String access = environment.getProperty("management.endpoint." + id + ".access",
					environment.getProperty("management.endpoints.access.default", "unrestricted"));
			String max = environment.getProperty("management.endpoints.access.max-permitted", "unrestricted");
			return "unrestricted".equalsIgnoreCase(access.trim()) && "unrestricted".equalsIgnoreCase(max.trim());
		}

	}

}
