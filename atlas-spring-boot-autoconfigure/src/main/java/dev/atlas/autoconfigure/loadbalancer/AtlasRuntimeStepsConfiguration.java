package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.affinity.AffinityClientConfiguration;
import dev.atlas.autoconfigure.gray.GrayClientConfiguration;
import dev.atlas.autoconfigure.outlier.OutlierClientConfiguration;
import dev.atlas.autoconfigure.outlier.StaleCheckStep;
import dev.atlas.autoconfigure.overload.OverloadClientConfiguration;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.autoconfigure.warmup.WarmupClientConfiguration;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * The steps of a service's routing that the concerns declare, in every load-balancer
 * child context Atlas routes (imported by {@link AtlasLoadBalancerClientConfiguration}):
 * each concern's own child configuration (its filter or adjuster and the
 * {@link RuntimeStep} that gives it new rules), and the {@link RuntimeStep}s of what the
 * composition itself holds (the strategy, the per-instance in-flight limit, the
 * statistics' decay time, the stale-list check). Skipped as a whole, with every
 * configuration it imports, when the application declares its own balancer for the
 * service. Not meant for component scanning.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnNoApplicationLoadBalancerCondition.class)
@Import({ GrayClientConfiguration.class, OutlierClientConfiguration.class, AffinityClientConfiguration.class,
		OverloadClientConfiguration.class, WarmupClientConfiguration.class })
class AtlasRuntimeStepsConfiguration {

	/**
	 * The strategy under new rules, and the picks counter.
	 */
	@Bean
	StrategyStep atlasStrategyStep(Environment environment, ServiceSettings settings, StrategyRegistry strategies,
			InstanceAttributesParser parser, InstanceStats stats, ObjectProvider<MeterRegistry> meterRegistry) {
		return new StrategyStep(ServiceContext.serviceId(environment), settings.get(StrategyRules.SECTION).strategy(),
				strategies, parser, stats, ServiceContext.meters(meterRegistry));
	}

	/**
	 * The service's per-instance in-flight limit, read by its load balancer for every
	 * pick, with its meter.
	 * @param environment the child context's environment (names the service)
	 * @param settings the service's settings (its {@code loadbalancer} rules)
	 * @param meterRegistry where the meter is registered
	 * @return the limit
	 */
	@Bean
	@ConditionalOnMissingBean(search = SearchStrategy.CURRENT)
	InFlightLimit atlasInFlightLimit(Environment environment, ServiceSettings settings,
			ObjectProvider<MeterRegistry> meterRegistry) {
		InFlightLimit limit = new InFlightLimit(settings.get(StrategyRules.SECTION).maxInFlightPerInstance());
		FunctionCounter
			.builder(AtlasLoadBalancerClientConfiguration.SATURATED_METER, limit, InFlightLimit::saturatedCount)
			.description("Requests that got no instance because every candidate had "
					+ "atlas.loadbalancer.max-in-flight-per-instance requests in flight")
			.tag("service", ServiceContext.serviceId(environment))
			.register(ServiceContext.meters(meterRegistry));
		return limit;
	}

	/**
	 * The per-instance in-flight limit under new rules.
	 * @param limit the service's limit
	 * @return the step
	 */
	@Bean
	InFlightLimitStep atlasInFlightLimitStep(InFlightLimit limit) {
		return new InFlightLimitStep(limit);
	}

	/**
	 * The statistics' decay time under new rules.
	 */
	@Bean
	StatsDecayStep atlasStatsDecayStep(InstanceStats stats) {
		return new StatsDecayStep(stats);
	}

	/**
	 * The stale-list check under new rules.
	 */
	@Bean
	StaleCheckStep atlasStaleCheckStep(ObjectProvider<LastKnownGood> lastKnownGood, ProbeScheduler scheduler) {
		return new StaleCheckStep(lastKnownGood.getIfAvailable(), scheduler);
	}

}
