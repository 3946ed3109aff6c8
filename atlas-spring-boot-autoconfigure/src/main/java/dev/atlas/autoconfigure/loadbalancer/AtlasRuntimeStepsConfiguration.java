package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;

import dev.atlas.autoconfigure.affinity.AffinityStep;
import dev.atlas.autoconfigure.affinity.CallerCluster;
import dev.atlas.autoconfigure.gray.GrayStep;
import dev.atlas.autoconfigure.outlier.OutlierStep;
import dev.atlas.autoconfigure.outlier.StaleCheckStep;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.autoconfigure.warmup.WarmupStep;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.weighting.SlowStart;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The {@link RuntimeStep}s of every load-balancer child context, imported by
 * {@link AtlasLoadBalancerClientConfiguration}: how each built-in part of a service's
 * routing takes new rules. Each step of a built-in filter or adjuster holds Atlas's own
 * bean (none when the application's bean replaced it, which is then kept as it is). Not
 * meant for component scanning.
 */
@Configuration(proxyBeanMethods = false)
class AtlasRuntimeStepsConfiguration {

	/**
	 * The strategy under new rules, and the picks counter.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	StrategyStep atlasStrategyStep(Environment environment, ServiceSettings settings, StrategyRegistry strategies,
			InstanceAttributesParser parser, InstanceStats stats, ObjectProvider<MeterRegistry> meterRegistry) {
		return new StrategyStep(AtlasLoadBalancerClientConfiguration.serviceId(environment),
				settings.get(StrategyRules.SECTION).strategy(), strategies, parser, stats,
				AtlasLoadBalancerClientConfiguration.meters(meterRegistry));
	}

	/**
	 * The statistics' decay time under new rules.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	StatsDecayStep atlasStatsDecayStep(InstanceStats stats) {
		return new StatsDecayStep(stats);
	}

	/**
	 * Atlas's gray router under new rules.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	GrayStep atlasGrayStep(Environment environment, ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<MeterRegistry> meterRegistry) {
		return new GrayStep(AtlasLoadBalancerClientConfiguration.serviceId(environment),
				localBean(beanFactory, "atlasGrayRouter", GrayRouter.class),
				AtlasLoadBalancerClientConfiguration.meters(meterRegistry));
	}

	/**
	 * Atlas's warmup under new rules.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	WarmupStep atlasWarmupStep(ConfigurableListableBeanFactory beanFactory) {
		return new WarmupStep(localBean(beanFactory, "atlasSlowStart", SlowStart.class));
	}

	/**
	 * Outlier detection and Atlas's ejection filter under new rules.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	OutlierStep atlasOutlierStep(ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<OutlierDetector> detector) {
		return new OutlierStep(detector.getIfAvailable(),
				localBean(beanFactory, "atlasOutlierEjection", OutlierEjection.class));
	}

	/**
	 * The stale-list check under new rules.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	StaleCheckStep atlasStaleCheckStep(ObjectProvider<LastKnownGood> lastKnownGood, ProbeScheduler scheduler) {
		return new StaleCheckStep(lastKnownGood.getIfAvailable(), scheduler);
	}

	/**
	 * Atlas's affinity filter under new caller-level rules.
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	AffinityStep atlasAffinityStep(Environment environment, ConfigurableListableBeanFactory beanFactory,
			CallerCluster callerCluster, ObjectProvider<MeterRegistry> meterRegistry) {
		return new AffinityStep(AtlasLoadBalancerClientConfiguration.serviceId(environment),
				localBean(beanFactory, "atlasClusterAffinity", ClusterAffinity.class), callerCluster::nextRules,
				AtlasLoadBalancerClientConfiguration.meters(meterRegistry), Clock.systemUTC());
	}

	/** Atlas's own bean of that name in this context, or {@code null}. */
	static <T> @Nullable T localBean(ConfigurableListableBeanFactory beanFactory, String name, Class<T> type) {
		return (beanFactory.containsLocalBean(name) && beanFactory.isTypeMatch(name, type))
				? beanFactory.getBean(name, type) : null;
	}

}
