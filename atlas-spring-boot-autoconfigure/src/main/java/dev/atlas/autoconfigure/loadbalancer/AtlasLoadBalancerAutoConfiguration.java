package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.atlas.autoconfigure.affinity.AffinityProperties;
import dev.atlas.autoconfigure.affinity.AffinitySection;
import dev.atlas.autoconfigure.affinity.CallerCensus;
import dev.atlas.autoconfigure.affinity.CallerCluster;
import dev.atlas.autoconfigure.affinity.PlaceholderZone;
import dev.atlas.autoconfigure.gray.GrayProperties;
import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.lifecycle.LifecycleProperties;
import dev.atlas.autoconfigure.outlier.OutlierProperties;
import dev.atlas.autoconfigure.outlier.OutlierSection;
import dev.atlas.autoconfigure.outlier.ProbeBundles;
import dev.atlas.autoconfigure.overload.RetryProperties;
import dev.atlas.autoconfigure.overload.RetrySection;
import dev.atlas.autoconfigure.registry.InstanceChangeSource;
import dev.atlas.autoconfigure.registry.RegistryProperties;
import dev.atlas.autoconfigure.runtime.ReloadListener;
import dev.atlas.autoconfigure.runtime.RulesRefreshListener;
import dev.atlas.autoconfigure.runtime.RuntimeRules;
import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.AtlasValueConverters;
import dev.atlas.autoconfigure.settings.CallerSection;
import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.autoconfigure.warmup.WarmupProperties;
import dev.atlas.autoconfigure.warmup.WarmupSection;
import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.support.Scheduler;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerZoneConfig;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * Makes Atlas the load balancer of every {@code @LoadBalanced} RestTemplate, RestClient,
 * WebClient and Feign client, when Spring Cloud LoadBalancer is present and enabled and
 * {@code atlas.enabled} is not {@code false}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = LoadBalancerAutoConfiguration.class)
@ConditionalOnClass(ReactorServiceInstanceLoadBalancer.class)
@ConditionalOnBooleanProperty(name = "spring.cloud.loadbalancer.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "atlas.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ AtlasProperties.class, LoadBalancerProperties.class, GrayProperties.class,
		AffinityProperties.class, WarmupProperties.class, OutlierProperties.class, RegistryProperties.class,
		LifecycleProperties.class, RetryProperties.class })
@LoadBalancerClients(defaultConfiguration = AtlasLoadBalancerClientConfiguration.class)
public final class AtlasLoadBalancerAutoConfiguration {

	/**
	 * Names of the beans of Atlas's own strategies: an application's strategy of the same
	 * name (under another bean name) replaces Atlas's.
	 */
	static final List<String> BUILT_IN_STRATEGIES = List.of("atlasWeightedRandomStrategy",
			"atlasSmoothRoundRobinStrategy", "atlasLeastRequestStrategy", "atlasPeakEwmaStrategy",
			"atlasRingHashStrategy", "atlasWeightedRoundRobinStrategy");

	private static final Logger log = LoggerFactory.getLogger(AtlasLoadBalancerAutoConfiguration.class);

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToAffinityMode atlasAffinityModeConverter() {
		return new AtlasValueConverters.ToAffinityMode();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToAllZeroWeightsPolicy atlasAllZeroWeightsPolicyConverter() {
		return new AtlasValueConverters.ToAllZeroWeightsPolicy();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToGrayFallback atlasGrayFallbackConverter() {
		return new AtlasValueConverters.ToGrayFallback();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static AtlasValueConverters.ToProbeType atlasProbeTypeConverter() {
		return new AtlasValueConverters.ToProbeType();
	}

	/**
	 * Checks at startup that the SSL bundles the outlier probe rules name
	 * ({@code atlas.outlier.probe.ssl-bundle}, globally and per service) exist: a wrong
	 * name fails the start, naming the property, instead of the first call of the
	 * service.
	 * @param atlas the per-service settings
	 * @param outlier the global outlier settings
	 * @param sslBundles the application's SSL bundles
	 * @return the check
	 */
	@Bean
	static SmartInitializingSingleton atlasProbeSslBundleCheck(ObjectProvider<AtlasProperties> atlas,
			ObjectProvider<OutlierProperties> outlier, ObjectProvider<SslBundles> sslBundles) {
		return () -> {
			Map<String, String> named = new LinkedHashMap<>();
			named.put("atlas.outlier.probe.ssl-bundle", outlier.getObject().getProbe().getSslBundle());
			atlas.getObject()
				.getServices()
				.forEach((service, properties) -> named.put("atlas.services." + service + ".outlier.probe.ssl-bundle",
						properties.getOutlier().getProbe().getSslBundle()));
			ProbeBundles.check(named, sslBundles.getIfAvailable());
		};
	}

	/**
	 * The executor of outlier probes and stale-list connect checks, shared by every
	 * service; its threads start at the first probe.
	 * @return the scheduler
	 */
	@Bean
	ProbeScheduler atlasProbeScheduler() {
		return new ProbeScheduler();
	}

	/**
	 * The settings of every service, resolved from {@code atlas.*} and
	 * {@code atlas.services.<serviceId>.*}; every configured service is resolved (and
	 * checked) at startup.
	 */
	@Bean
	AtlasSettings atlasSettings(ConfigurableEnvironment environment, ObjectProvider<Section<?, ?>> sections,
			ObjectProvider<CallerSection<?>> callerSections) {
		return new AtlasSettings(environment, sections.orderedStream().toList(),
				callerSections.orderedStream().toList());
	}

	/**
	 * The stale limit of every service's last-known-good list, read once, here, when the
	 * application context starts.
	 * @param registry {@code atlas.registry.*}
	 * @return the limit
	 */
	@Bean
	StaleLimit atlasStaleLimit(RegistryProperties registry) {
		return StaleLimit.of(registry);
	}

	/**
	 * The choice section of every service's rules ({@code loadbalancer}).
	 * @return the section
	 */
	@Bean
	static Section<?, ?> atlasStrategySection() {
		return StrategyRules.SECTION;
	}

	/**
	 * The gray section of every service's rules.
	 * @return the section
	 */
	@Bean
	static Section<?, ?> atlasGraySection() {
		return GraySettings.SECTION;
	}

	/**
	 * The warmup section of every service's rules.
	 * @return the section
	 */
	@Bean
	static Section<?, ?> atlasWarmupSection() {
		return WarmupSection.SECTION;
	}

	/**
	 * The outlier detection section of every service's rules.
	 * @return the section
	 */
	@Bean
	static Section<?, ?> atlasOutlierSection() {
		return OutlierSection.SECTION;
	}

	/**
	 * The retry section of every service's rules (its retry budget).
	 * @return the section
	 */
	@Bean
	static Section<?, ?> atlasRetrySection() {
		return RetrySection.SECTION;
	}

	/**
	 * The caller-level gray settings ({@code atlas.gray}).
	 * @return the section
	 */
	@Bean
	static CallerSection<?> atlasGrayCallerSection() {
		return GraySettings.CALLER;
	}

	/**
	 * The caller-level affinity settings ({@code atlas.affinity}).
	 * @return the section
	 */
	@Bean
	static CallerSection<?> atlasAffinityCallerSection() {
		return AffinitySection.CALLER;
	}

	/**
	 * Reports per-service settings that are not used: at startup, properties under
	 * {@code atlas.services} that bind to nothing; a grace period after the first call,
	 * configured keys that match no called service.
	 */
	@Bean
	@ConditionalOnMissingBean
	ServiceKeyAudit atlasServiceKeyAudit(AtlasSettings settings, Environment environment) {
		return new ServiceKeyAudit(settings, environment);
	}

	/**
	 * This caller's own cluster for cluster affinity: {@code atlas.affinity.cluster},
	 * else the Nacos cluster name, else the zone of Spring Cloud's
	 * {@link LoadBalancerZoneConfig} (read at the first request).
	 */
	@Bean
	CallerCluster atlasCallerCluster(AtlasSettings settings, Environment environment,
			ObjectProvider<LoadBalancerZoneConfig> zoneConfig, ObjectProvider<PlaceholderZone> placeholders) {
		return new CallerCluster(settings, environment, zoneConfig, placeholders);
	}

	/**
	 * How this application's callers are spread over the zones, for proportional cluster
	 * affinity: read from the registry at the first call in that mode, then periodically.
	 */
	@Bean
	CallerCensus atlasCallerCensus(AtlasSettings settings, Environment environment,
			ObjectProvider<DiscoveryClient> discovery, ObjectProvider<Registration> registration, Scheduler scheduler) {
		return new CallerCensus(settings, environment, discovery, registration, scheduler);
	}

	/**
	 * Registers the {@code weighted-random} strategy (Atlas's default).
	 * @return the factory
	 */
	@Bean
	@ConditionalOnMissingBean(name = "atlasWeightedRandomStrategy")
	static StrategyFactory atlasWeightedRandomStrategy() {
		return WeightedRandomBalancer.FACTORY;
	}

	/**
	 * Registers the {@code smooth-round-robin} strategy.
	 * @return the factory
	 */
	@Bean
	@ConditionalOnMissingBean(name = "atlasSmoothRoundRobinStrategy")
	static StrategyFactory atlasSmoothRoundRobinStrategy() {
		return SmoothWeightedRoundRobinBalancer.FACTORY;
	}

	/**
	 * Registers the {@code least-request} strategy (power of two choices by in-flight
	 * requests).
	 * @param settings the rules of each service
	 * @return the factory
	 */
	@Bean
	@ConditionalOnMissingBean(name = "atlasLeastRequestStrategy")
	static StrategyFactory atlasLeastRequestStrategy(ObjectProvider<AtlasSettings> settings) {
		return LeastRequestBalancer.factory(
				(serviceId) -> settings.getObject().settingsFor(serviceId).get(StrategyRules.SECTION).leastRequest());
	}

	/**
	 * Registers the {@code peak-ewma} strategy (power of two choices by peak-sensitive
	 * response time × in-flight requests).
	 * @param settings the rules of each service
	 * @return the factory
	 */
	@Bean
	@ConditionalOnMissingBean(name = "atlasPeakEwmaStrategy")
	static StrategyFactory atlasPeakEwmaStrategy(ObjectProvider<AtlasSettings> settings) {
		return PeakEwmaBalancer
			.factory((serviceId) -> settings.getObject().settingsFor(serviceId).get(StrategyRules.SECTION).peakEwma());
	}

	/**
	 * Registers the {@code ring-hash} strategy (consistent hashing of a header or cookie,
	 * optionally with bounded loads).
	 * @param settings the rules of each service
	 * @return the factory
	 */
	@Bean
	@ConditionalOnMissingBean(name = "atlasRingHashStrategy")
	static StrategyFactory atlasRingHashStrategy(ObjectProvider<AtlasSettings> settings) {
		return RingHashBalancer
			.factory((serviceId) -> settings.getObject().settingsFor(serviceId).get(StrategyRules.SECTION).hash());
	}

	/**
	 * Every registered strategy, by name; fails startup when a configured strategy name,
	 * global or per service, is not registered, naming the property and the registered
	 * names.
	 * @param factories every {@link StrategyFactory} bean
	 * @param settings the resolved settings of every service
	 * @param beans where Atlas's own strategies are found by bean name
	 * @return the registry
	 */
	@Bean
	StrategyRegistry atlasStrategyRegistry(ObjectProvider<StrategyFactory> factories, AtlasSettings settings,
			ListableBeanFactory beans) {
		Set<StrategyFactory> builtIns = BUILT_IN_STRATEGIES.stream()
			.filter(beans::containsBean)
			.map((name) -> beans.getBean(name, StrategyFactory.class))
			.collect(Collectors.toSet());
		StrategyRegistry registry = new StrategyRegistry(factories.orderedStream().toList(), builtIns);
		settings.addCheck(registry::check);
		return registry;
	}

	/**
	 * Applies runtime changes of {@code atlas.*} to every service.
	 * @param settings the settings in force
	 * @param meterRegistry where the change counters are registered
	 * @param listeners told of every change (caller-level consumers of the rules)
	 * @return the applier
	 */
	@Bean
	RuntimeRules atlasRuntimeRules(AtlasSettings settings, ObjectProvider<MeterRegistry> meterRegistry,
			ObjectProvider<ReloadListener> listeners) {
		return new RuntimeRules(settings, ServiceContext.meters(meterRegistry), Clock.systemUTC(), listeners);
	}

	/** Spring Cloud's refresh drives runtime changes. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
	static class RefreshConfiguration {

		@Bean
		RulesRefreshListener atlasRulesRefreshListener(RuntimeRules rules) {
			return new RulesRefreshListener(rules);
		}

	}

	@Bean
	SmartInitializingSingleton atlasLoadBalancerStartupReport(AtlasSettings settings, AtlasProperties atlas,
			GrayProperties gray, LifecycleProperties lifecycle, RegistryProperties registry, Environment environment,
			CallerCluster callerCluster, ObjectProvider<LoadBalancerClientSpecification> specifications,
			ObjectProvider<InstanceChangeSource> changeSources) {
		return () -> {
			log.info(StartupReport.features(settings, atlas, gray, lifecycle, registry, callerCluster,
					StartupReport.ownBalancers(specifications)));
			StartupReport.conflicts(lifecycle, registry, environment, changeSources.stream().findAny().isPresent())
				.forEach(log::warn);
		};
	}

}
