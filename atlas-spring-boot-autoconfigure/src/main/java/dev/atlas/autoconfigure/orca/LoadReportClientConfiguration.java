package dev.atlas.autoconfigure.orca;

import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.loadbalancer.orca.LoadReportLifecycle;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Each service's context: feeds the service's reported load from the answers of its calls
 * ({@link LoadReportLifecycle}), while the service's strategy is
 * {@code weighted-round-robin} (otherwise an answer costs one set lookup).
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBean(ReportedLoads.class)
public class LoadReportClientConfiguration {

	@Bean
	LoadReportLifecycle atlasLoadReportLifecycle(Environment environment, ReportedLoads loads) {
		String serviceId = ServiceContext.serviceId(environment);
		return new LoadReportLifecycle(serviceId, loads.of(serviceId), () -> loads.wanted(serviceId));
	}

}
