package dev.atlas.autoconfigure.gray;

import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.routing.CanaryMeters;
import dev.atlas.loadbalancer.routing.GrayRouter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Gray lanes in every load-balancer child context that Atlas routes: the candidate filter
 * and the runtime step that gives it new rules. Imported by the load-balancer
 * configuration; not meant for component scanning.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
public class GrayClientConfiguration {

	/**
	 * The meters of the service's percentage canaries, shared by every version of its
	 * router; removed with the child context.
	 * @param environment the child context's environment (names the service)
	 * @param meterRegistry where they are registered
	 * @return the meters, none registered until a router puts its rules in force
	 */
	@Bean(destroyMethod = "close")
	CanaryMeters atlasCanaryMeters(Environment environment, ObjectProvider<MeterRegistry> meterRegistry) {
		return new CanaryMeters(ServiceContext.serviceId(environment), ServiceContext.meters(meterRegistry));
	}

	/**
	 * Gray-tag lanes, the first built-in candidate filter.
	 * @param environment the child context's environment (names the service)
	 * @param settings the service's settings (its gray rules)
	 * @param meterRegistry where the fallback counter is registered
	 * @param canaryMeters the service's canary meters, its rules put in force here
	 * @return the filter
	 */
	@Bean
	@ConditionalOnBooleanProperty(name = "atlas.gray.enabled", matchIfMissing = true)
	@ConditionalOnMissingBean
	GrayRouter atlasGrayRouter(Environment environment, ServiceSettings settings,
			ObjectProvider<MeterRegistry> meterRegistry, CanaryMeters canaryMeters) {
		return new GrayRouter(ServiceContext.serviceId(environment), settings.get(GraySettings.SECTION).gray(),
				ServiceContext.meters(meterRegistry), canaryMeters)
			.putInForce();
	}

	/**
	 * Atlas's gray router under new rules.
	 * @param environment the child context's environment (names the service)
	 * @param beanFactory the child context
	 * @param meterRegistry where a new router's meters are registered
	 * @return the step
	 */
	@Bean
	GrayStep atlasGrayStep(Environment environment, ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<MeterRegistry> meterRegistry) {
		return new GrayStep(ServiceContext.serviceId(environment),
				ServiceContext.ownBean(beanFactory, "atlasGrayRouter", GrayRouter.class),
				ServiceContext.meters(meterRegistry));
	}

}
