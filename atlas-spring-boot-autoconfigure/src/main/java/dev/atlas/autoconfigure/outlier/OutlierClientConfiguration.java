package dev.atlas.autoconfigure.outlier;

import java.time.Clock;

import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.outlier.OutlierLifecycle;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.support.Scheduler;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Outlier detection in every load-balancer child context that Atlas routes: the detector,
 * fed by the request lifecycle, the ejection filter, and the runtime step that gives them
 * new rules. Imported by the load-balancer configuration; not meant for component
 * scanning.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
public class OutlierClientConfiguration {

	/**
	 * Outlier detection of the service: always declared, since a service may turn it on
	 * under {@code atlas.services.<service-id>.outlier} while it is off globally (then it
	 * records nothing and ejects nothing).
	 * @param environment the child context's environment (names the service)
	 * @param settings the service's settings (its outlier rules)
	 * @param scheduler runs the probes
	 * @param meterRegistry where the outlier meters are registered
	 * @param sslBundles the application's SSL bundles (for
	 * {@code atlas.outlier.probe.ssl-bundle})
	 * @return the detector, closed with the child context
	 */
	@Bean
	@ConditionalOnMissingBean
	OutlierDetector atlasOutlierDetector(Environment environment, ServiceSettings settings, Scheduler scheduler,
			ObjectProvider<MeterRegistry> meterRegistry, ObjectProvider<SslBundles> sslBundles) {
		OutlierRules rules = settings.get(OutlierSection.SECTION);
		return new OutlierDetector(ServiceContext.serviceId(environment), rules, Clock.systemUTC(),
				ProbeBundles.probe(rules.probe(), sslBundles.getIfAvailable()), scheduler,
				ServiceContext.meters(meterRegistry));
	}

	/**
	 * Outlier ejection, the candidate filter between the gray lane and cluster affinity.
	 * @param detector the service's detector
	 * @return the filter
	 */
	@Bean
	@ConditionalOnMissingBean
	OutlierEjection atlasOutlierEjection(OutlierDetector detector) {
		return new OutlierEjection(detector);
	}

	/**
	 * Feeds outlier detection from the request lifecycle, and tells it whether the
	 * service is still called.
	 * @param detector the service's detector
	 * @return the lifecycle
	 */
	@Bean
	OutlierLifecycle atlasOutlierLifecycle(OutlierDetector detector) {
		return new OutlierLifecycle(detector);
	}

	/**
	 * Outlier detection and Atlas's ejection filter under new rules.
	 * @param beanFactory the child context
	 * @param detector the service's detector
	 * @param sslBundles the application's SSL bundles
	 * @return the step
	 */
	@Bean
	OutlierStep atlasOutlierStep(ConfigurableListableBeanFactory beanFactory, ObjectProvider<OutlierDetector> detector,
			ObjectProvider<SslBundles> sslBundles) {
		return new OutlierStep(detector.getIfAvailable(),
				ServiceContext.ownBean(beanFactory, "atlasOutlierEjection", OutlierEjection.class),
				sslBundles.getIfAvailable());
	}

}
