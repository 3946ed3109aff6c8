package dev.atlas.autoconfigure.affinity;

import java.time.Clock;
import java.util.function.BooleanSupplier;

import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.routing.AffinityMeters;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Cluster affinity in every load-balancer child context that Atlas routes: the candidate
 * filter and the runtime step that gives it the caller's new rules. Imported by the
 * load-balancer configuration; not meant for component scanning.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
public class AffinityClientConfiguration {

	/**
	 * Cluster affinity, within the gray lane; passes every candidate through when the
	 * caller has no cluster. The caller's cluster is read at the first request
	 * ({@link CallerCluster}), when a registry integration has set Spring Cloud's
	 * {@code LoadBalancerZoneConfig}.
	 * @param environment the child context's environment (names the service)
	 * @param callerCluster the caller's affinity rules
	 * @param callerCensus the callers' spread over the zones (proportional mode)
	 * @param outliers the service's outlier detection, whose ejections count as unhealthy
	 * capacity (proportional mode)
	 * @param meterRegistry where the affinity meters are registered
	 * @return the filter
	 */
	@Bean
	@ConditionalOnBooleanProperty(name = "atlas.affinity.enabled", matchIfMissing = true)
	@ConditionalOnMissingBean
	ClusterAffinity atlasClusterAffinity(Environment environment, CallerCluster callerCluster,
			CallerCensus callerCensus, ObjectProvider<OutlierDetector> outliers,
			ObjectProvider<ServicePipeline> pipeline, ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = ServiceContext.serviceId(environment);
		// read once per decision (the pipeline, which holds this filter, exists by then)
		BooleanSupplier hashing = () -> {
			ServicePipeline routing = pipeline.getIfUnique();
			return routing != null && RingHashBalancer.NAME.equals(routing.current().strategyName());
		};
		return new ClusterAffinity(serviceId, callerCluster::rules, callerCensus::current, outliers.getIfUnique(),
				hashing, new AffinityMeters(serviceId, ServiceContext.meters(meterRegistry)), Clock.systemUTC());
	}

	/**
	 * Atlas's affinity filter under new caller-level rules.
	 * @param beanFactory the child context
	 * @param callerCluster the caller's affinity rules
	 * @return the step
	 */
	@Bean
	AffinityStep atlasAffinityStep(ConfigurableListableBeanFactory beanFactory, CallerCluster callerCluster) {
		return new AffinityStep(ServiceContext.ownBean(beanFactory, "atlasClusterAffinity", ClusterAffinity.class),
				callerCluster::nextRules);
	}

}
