package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.outlier.OutlierSection;
import dev.atlas.autoconfigure.registry.InstanceChangeSource;
import dev.atlas.autoconfigure.registry.RegistryEventRefresher;
import dev.atlas.autoconfigure.runtime.RuntimeRules;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.ProbeRules;
import dev.atlas.loadbalancer.outlier.Probes;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.stats.InstanceStatsLifecycle;
import dev.atlas.loadbalancer.weighting.SlowStart;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

/**
 * The configuration of every load-balancer child context (one per service), registered
 * through {@code @LoadBalancerClients(defaultConfiguration = ...)} by
 * {@link AtlasLoadBalancerAutoConfiguration}. Not meant for component scanning.
 *
 * <p>
 * It puts Atlas's stage on top of whatever {@link ServiceInstanceListSupplier} the
 * context has (Spring's discovery + cache chain by default, or one the application
 * declares), and makes {@link AtlasLoadBalancer} choose among what the stage leaves. The
 * stage is a loop over every {@link WeightAdjuster} and {@link CandidateFilter} bean, in
 * their order: the built-in ones, each declared by its concern's own child configuration
 * ({@code GrayClientConfiguration}, {@code WarmupClientConfiguration},
 * {@code OutlierClientConfiguration}, {@code AffinityClientConfiguration}, imported
 * through {@link AtlasRuntimeStepsConfiguration}) or here (retry avoidance), each its own
 * conditional bean replaced by a bean of the same type the application declares, plus any
 * the application declares, in its context (every service) or in a
 * {@code @LoadBalancerClient} configuration (one service).
 *
 * <p>
 * Atlas steps aside completely for a balancer that the application declares for one
 * service with {@code @LoadBalancerClient(name = ..., configuration = ...)}: that
 * service's context gets none of Atlas's beans and no stage on its supplier, and one INFO
 * line at its first use says so ({@link ServiceFirstUse}). It does not step aside for
 * Spring Cloud Alibaba's {@code NacosLoadBalancer} (turned on by
 * {@code spring.cloud.loadbalancer.nacos.enabled=true}): with Atlas enabled, Atlas is in
 * charge, whatever order the two default configurations are registered in, and startup
 * says so.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@Import(AtlasRuntimeStepsConfiguration.class)
public class AtlasLoadBalancerClientConfiguration {

	/** Gauge of instances still warming up; tags {@code service}. */
	public static final String WARMING_METER = "atlas.warmup.instances";

	/**
	 * Counter of requests sent to instances chosen by Atlas (each attempt counts), read
	 * from {@link InstanceStats}; tags {@code service}, {@code strategy}.
	 */
	public static final String PICKS_METER = "atlas.picks";

	/**
	 * Counter of requests that got no instance because every candidate was at its limit.
	 */
	public static final String SATURATED_METER = "atlas.saturated";

	/**
	 * The service's settings as this context is built with them, resolved once, so that
	 * every built-in step and {@link ServiceRouting} start from the same rules (a runtime
	 * change made while the context is created is then applied when
	 * {@link ServiceRouting} registers).
	 * @param environment the child context's environment (names the service)
	 * @param settings the settings of every service
	 * @return the settings in force now
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	ServiceSettings atlasServiceSettings(Environment environment, AtlasSettings settings) {
		return settings.settingsFor(ServiceContext.serviceId(environment));
	}

	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	InstanceAttributesParser atlasInstanceAttributesParser(Environment environment, AtlasSettings settings,
			ObjectProvider<MeterRegistry> meterRegistry) {
		return new InstanceAttributesParser(ServiceContext.serviceId(environment),
				settings.atStartup(GraySettings.CALLER).getMetadataKey(), ServiceContext.meters(meterRegistry));
	}

	/**
	 * Retry avoidance, the last built-in candidate filter.
	 * @return the filter
	 */
	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	RetryAvoidance atlasRetryAvoidance() {
		return new RetryAvoidance();
	}

	/**
	 * Last-known-good over empty registry answers, with a connect check of stale lists
	 * (TCP, the outlier probe's timeout and interval).
	 * @param environment the child context's environment (names the service)
	 * @param staleLimit {@code atlas.registry.stale-limit} as at startup
	 * @param settings the service's settings (its probe timeout and interval)
	 * @param scheduler runs the connect checks
	 * @param meterRegistry where the stale counter is registered
	 * @return the guard
	 */
	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	LastKnownGood atlasLastKnownGood(Environment environment, StaleLimit staleLimit, ServiceSettings settings,
			ProbeScheduler scheduler, ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = ServiceContext.serviceId(environment);
		ProbeRules probe = settings.get(OutlierSection.SECTION).probe();
		return new LastKnownGood(serviceId, staleLimit.duration(), Clock.systemUTC(),
				ServiceContext.meters(meterRegistry),
				new LastKnownGood.StaleCheck(Probes.tcp(probe.timeout()), scheduler, probe.interval()));
	}

	/**
	 * Puts {@link AtlasServiceInstanceListSupplier} on top of every supplier bean of the
	 * context, so Atlas keeps whatever chain the context has (Spring's discovery + cache,
	 * a registry's own filters, or the application's supplier); not when the application
	 * declares its own balancer for the service (Atlas steps aside for it).
	 */
	@Bean
	static BeanPostProcessor atlasSupplierStages(ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<InstanceChangeSource> changeSources, ObjectProvider<RegistryEventRefresher> refresher,
			ObjectProvider<LastKnownGood> lastKnownGood, ObjectProvider<ServicePipeline> pipeline,
			ObjectProvider<OutlierDetector> outliers) {
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (!(bean instanceof ServiceInstanceListSupplier supplier) || containsAtlasStage(supplier)
						|| OnNoApplicationLoadBalancerCondition.applicationBalancer(beanFactory) != null) {
					return bean;
				}
				LastKnownGood guard = lastKnownGood.getIfAvailable();
				AtlasServiceInstanceListSupplier stage = new AtlasServiceInstanceListSupplier(supplier, guard,
						pipeline.getObject());
				outliers.ifAvailable((detector) -> detector.instances(stage::lastSeen));
				RegistryEventRefresher evictor = refresher.getIfAvailable();
				if (evictor != null) {
					String serviceId = supplier.getServiceId();
					List<InstanceChangeSource> sources = changeSources.orderedStream().toList();
					sources.forEach((source) -> source.subscribe(serviceId, () -> evictor.evict(serviceId)));
					if (guard != null && !sources.isEmpty()) {
						guard.confirmEmpty(() -> confirmsNoInstances(sources, serviceId));
					}
				}
				return stage;
			}
		};
	}

	private static boolean confirmsNoInstances(List<InstanceChangeSource> sources, String serviceId) {
		for (InstanceChangeSource source : sources) {
			if (source.confirmsNoInstances(serviceId)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The filters in their order, with retry avoidance moved after every other one
	 * (including filters without an order, which sort at the same lowest precedence): it
	 * must see the final candidates, so that a failed instance that is the only one left
	 * is retried rather than answered with "no instance available".
	 */
	static List<CandidateFilter> retryAvoidanceLast(List<CandidateFilter> ordered) {
		List<CandidateFilter> filters = new ArrayList<>(ordered);
		List<CandidateFilter> last = filters.stream().filter(RetryAvoidance.class::isInstance).toList();
		filters.removeAll(last);
		filters.addAll(last);
		return filters;
	}

	/**
	 * Whether a supplier already is, or delegates to, Atlas's stage: Spring's retry
	 * configuration declares a second supplier bean wrapping the first
	 * ({@code RetryAwareServiceInstanceListSupplier}), which must not get a second stage
	 * (warmup would apply twice).
	 */
	static boolean containsAtlasStage(ServiceInstanceListSupplier supplier) {
		return AtlasServiceInstanceListSupplier.find(supplier) != null;
	}

	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	InstanceStats atlasInstanceStats(ServiceSettings settings) {
		StrategyRules rules = settings.get(StrategyRules.SECTION);
		InstanceStats stats = new InstanceStats(rules.peakEwma().decayTime(), System::nanoTime);
		stats.failureStatuses(rules.failureStatuses());
		return stats;
	}

	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	InstanceStatsLifecycle atlasInstanceStatsLifecycle(InstanceStats stats) {
		return new InstanceStatsLifecycle(stats);
	}

	/**
	 * Once per service, when its context is created: records the call (for the check of
	 * configured per-service keys) and says when Atlas steps aside for the application's
	 * own balancer.
	 * @param environment the child context's environment (names the service)
	 * @param beanFactory the child context
	 * @param settings the configured keys
	 * @param audit the check of configured keys, if any
	 * @return the hook
	 */
	@Bean
	ServiceFirstUse atlasServiceFirstUse(Environment environment, ConfigurableListableBeanFactory beanFactory,
			AtlasSettings settings, ObjectProvider<ServiceKeyAudit> audit) {
		return new ServiceFirstUse(ServiceContext.serviceId(environment), beanFactory, settings,
				audit.getIfAvailable());
	}

	/**
	 * The routing of the service, shared by Atlas's stage and load balancer: the first
	 * version has every {@link WeightAdjuster} and {@link CandidateFilter} bean in their
	 * order (retry avoidance last) and the configured strategy; {@link ServiceRouting}
	 * puts new versions in force when the rules change at runtime.
	 * @param environment the child context's environment (names the service)
	 * @param settings the service's settings
	 * @param strategies the registered strategies
	 * @param parser parses lists into snapshots
	 * @param adjusters the weight adjusters
	 * @param filters the candidate filters
	 * @param meterRegistry where the strategy's and warmup's meters are registered
	 * @return the routing
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	ServicePipeline atlasServicePipeline(Environment environment, ServiceSettings settings, StrategyRegistry strategies,
			InstanceAttributesParser parser, ObjectProvider<WeightAdjuster> adjusters,
			ObjectProvider<CandidateFilter> filters, ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = ServiceContext.serviceId(environment);
		MeterRegistry meters = ServiceContext.meters(meterRegistry);
		StrategyRules choice = settings.get(StrategyRules.SECTION);
		LoadBalancingStrategy strategy = strategies.create(choice.strategy(),
				new StrategySettings(serviceId, parser, choice.allZeroWeights(), meters));
		ServicePipeline pipeline = new ServicePipeline(
				new Pipeline(new SnapshotCache(parser), adjusters.orderedStream().toList(),
						retryAvoidanceLast(filters.orderedStream().toList()), choice.strategy(), strategy));
		Gauge.builder(WARMING_METER, pipeline, AtlasLoadBalancerClientConfiguration::warmingInstances)
			.description("Instances of the service still ramping up their weight (warmup)")
			.tag("service", serviceId)
			.register(meters);
		return pipeline;
	}

	/**
	 * Instances still warming up in the version in force (the {@value #WARMING_METER}
	 * gauge).
	 * @param pipeline a service's routing
	 * @return {@code 0} when warmup is not in the pipeline
	 */
	static double warmingInstances(ServicePipeline pipeline) {
		for (WeightAdjuster adjuster : pipeline.current().adjusters()) {
			if (adjuster instanceof SlowStart warmup) {
				return warmup.warmingInstances();
			}
		}
		return 0;
	}

	/**
	 * Puts runtime changes of the rules in force for this service, through every
	 * {@link RuntimeStep} bean of its context (registered with {@link RuntimeRules} while
	 * the context lives).
	 */
	@Bean
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	ServiceRouting atlasServiceRouting(Environment environment, ServiceSettings settings, ServicePipeline pipeline,
			RuntimeRules rules, InstanceAttributesParser parser, ObjectProvider<RuntimeStep> steps) {
		return new ServiceRouting(ServiceContext.serviceId(environment), pipeline, settings,
				steps.orderedStream().toList(), parser, rules);
	}

	@Bean
	@Primary
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	public ReactorLoadBalancer<ServiceInstance> atlasLoadBalancer(Environment environment,
			LoadBalancerClientFactory loadBalancerClientFactory, ServicePipeline pipeline, InstanceStats stats,
			ObjectProvider<InFlightLimit> limit) {
		String serviceId = ServiceContext.serviceId(environment);
		return new AtlasLoadBalancer(serviceId,
				loadBalancerClientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class), pipeline,
				stats, limit.getIfAvailable(InFlightLimit::new));
	}

}
