package dev.atlas.autoconfigure.warmup;

import java.time.Clock;

import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.weighting.SlowStart;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Warmup in every load-balancer child context that Atlas routes: the weight adjuster and
 * the runtime step that gives it new rules. Imported by the load-balancer configuration;
 * not meant for component scanning.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
public class WarmupClientConfiguration {

	/**
	 * Warmup (slow start), the built-in weight adjuster; always declared, since a service
	 * may turn warmup on under {@code atlas.services.<service-id>.warmup} while it is off
	 * globally (then it passes every snapshot through unchanged).
	 * @param settings the service's settings (its warmup rules)
	 * @return the adjuster
	 */
	@Bean
	@ConditionalOnMissingBean
	SlowStart atlasSlowStart(ServiceSettings settings) {
		return new SlowStart(settings.get(WarmupSection.SECTION), Clock.systemUTC());
	}

	/**
	 * Atlas's warmup under new rules.
	 * @param beanFactory the child context
	 * @return the step
	 */
	@Bean
	WarmupStep atlasWarmupStep(ConfigurableListableBeanFactory beanFactory) {
		return new WarmupStep(ServiceContext.ownBean(beanFactory, "atlasSlowStart", SlowStart.class));
	}

}
