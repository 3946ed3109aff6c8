package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.AtlasSettings;
import dev.atlas.autoconfigure.GrayProperties;
import dev.atlas.autoconfigure.RegistryProperties;
import dev.atlas.autoconfigure.ServiceSettings;
import dev.atlas.loadbalancer.choice.AtlasLoadBalancer;
import dev.atlas.loadbalancer.choice.Strategy;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.LastKnownGood;
import dev.atlas.loadbalancer.stats.InstanceStats;
import io.micrometer.core.instrument.Gauge;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.routing.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.weighting.SlowStart;
import java.time.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

/**
 * The configuration of every load-balancer child context (one per service), registered
 * through {@code @LoadBalancerClients(defaultConfiguration = ...)} by
 * {@link AtlasLoadBalancerAutoConfiguration}. Not meant for component scanning.
 *
 * <p>
 * It puts Atlas's stages on top of whatever {@link ServiceInstanceListSupplier} the
 * context has (Spring's discovery + cache chain by default, or one the application
 * declares), and makes {@link AtlasLoadBalancer} choose among what they leave.
 *
 * <p>
 * Atlas's balancer steps aside for a balancer that the application declares for one
 * service with {@code @LoadBalancerClient(name = ..., configuration = ...)}. It does not
 * step aside for Spring Cloud Alibaba's {@code NacosLoadBalancer} (turned on by
 * {@code spring.cloud.loadbalancer.nacos.enabled=true}): with Atlas enabled, Atlas is in
 * charge, whatever order the two default configurations are registered in, and startup
 * says so.
 */
@Configuration(proxyBeanMethods = false)
public class AtlasLoadBalancerClientConfiguration {

	/** Gauge of instances still warming up; tags {@code service}. */
	public static final String WARMING_METER = "atlas.warmup.instances";

	/** Meters go nowhere when the application has no (single) MeterRegistry. */
	private static final MeterRegistry NO_METERS = new CompositeMeterRegistry();

	static String serviceId(Environment environment) {
		return environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME, "");
	}

	static double warming(AtlasServiceInstanceListSupplier stage) {
		InstanceSnapshot seen = stage.lastSeen();
		int warming = 0;
		for (int i = 0; i < seen.size(); i++) {
			if (seen.effectiveWeight(i) < seen.attributes(i).weight()) {
				warming++;
			}
		}
		return warming;
	}

	static MeterRegistry meters(ObjectProvider<MeterRegistry> meterRegistry) {
		return meterRegistry.getIfUnique(() -> NO_METERS);
	}

	@Bean
	InstanceAttributesParser atlasInstanceAttributesParser(Environment environment, GrayProperties gray,
			ObjectProvider<MeterRegistry> meterRegistry) {
		return new InstanceAttributesParser(serviceId(environment), gray.getMetadataKey(), meters(meterRegistry));
	}

	@Bean
	GrayRouter atlasGrayRouter(Environment environment, AtlasSettings settings,
			ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = serviceId(environment);
		return new GrayRouter(serviceId, settings.settingsFor(serviceId).gray(), meters(meterRegistry));
	}

	@Bean
	ClusterAffinity atlasClusterAffinity(Environment environment, AtlasSettings settings,
			ObjectProvider<MeterRegistry> meterRegistry) {
		String defaultCluster = environment.getProperty("spring.cloud.nacos.discovery.cluster-name",
				environment.getProperty("spring.cloud.loadbalancer.zone"));
		return new ClusterAffinity(serviceId(environment), settings.affinity(defaultCluster), meters(meterRegistry),
				Clock.systemUTC());
	}

	@Bean
	SlowStart atlasSlowStart(Environment environment, AtlasSettings settings) {
		return new SlowStart(settings.settingsFor(serviceId(environment)).warmup(), Clock.systemUTC());
	}

	@Bean
	LastKnownGood atlasLastKnownGood(Environment environment, RegistryProperties registry,
			ObjectProvider<MeterRegistry> meterRegistry) {
		return new LastKnownGood(serviceId(environment), registry.getStaleLimit(), Clock.systemUTC(),
				meters(meterRegistry));
	}

	/**
	 * Puts {@link AtlasServiceInstanceListSupplier} on top of every supplier bean of the
	 * context, so Atlas keeps whatever chain the context has (Spring's discovery + cache,
	 * a registry's own filters, or the application's supplier).
	 */
	@Bean
	static BeanPostProcessor atlasSupplierStages(ObjectProvider<InstanceChangeSource> changeSources,
			ObjectProvider<RegistryEventRefresher> refresher, ObjectProvider<MeterRegistry> meterRegistry,
			ObjectProvider<AtlasSettings> settings, ObjectProvider<InstanceAttributesParser> parser,
			ObjectProvider<LastKnownGood> lastKnownGood, ObjectProvider<SlowStart> slowStart,
			ObjectProvider<GrayRouter> grayRouter, ObjectProvider<ClusterAffinity> affinity) {
		return new BeanPostProcessor() {
			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (!(bean instanceof ServiceInstanceListSupplier supplier) || containsAtlasStage(supplier)) {
					return bean;
				}
				SlowStart warmup = slowStart.getObject();
				ClusterAffinity clusters = affinity.getObject();
				AtlasServiceInstanceListSupplier stage = new AtlasServiceInstanceListSupplier(supplier,
						new SnapshotCache(parser.getObject()), lastKnownGood.getObject(),
						warmup.rules().enabled() ? warmup : null,
						settings.getObject().settingsFor(supplier.getServiceId()).grayEnabled() ? grayRouter.getObject()
								: null,
						(clusters.rules().cluster() != null) ? clusters : null);
				Gauge.builder(WARMING_METER, stage, AtlasLoadBalancerClientConfiguration::warming)
					.description("Instances of the service still ramping up their weight (warmup)")
					.tag("service", supplier.getServiceId())
					.register(meters(meterRegistry));
				RegistryEventRefresher evictor = refresher.getIfAvailable();
				if (evictor != null) {
					String serviceId = supplier.getServiceId();
					changeSources.orderedStream()
						.forEach((source) -> source.subscribe(serviceId, () -> evictor.evict(serviceId)));
				}
				return stage;
			}
		};
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
	InstanceStats atlasInstanceStats() {
		return new InstanceStats();
	}

	@Bean
	InstanceStatsLifecycle atlasInstanceStatsLifecycle(InstanceStats stats) {
		return new InstanceStatsLifecycle(stats);
	}

	@Bean
	@Primary
	@Conditional(OnNoApplicationLoadBalancerCondition.class)
	public ReactorLoadBalancer<ServiceInstance> atlasLoadBalancer(Environment environment,
			LoadBalancerClientFactory loadBalancerClientFactory, AtlasSettings atlasSettings,
			InstanceAttributesParser parser, InstanceStats stats, ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = serviceId(environment);
		ServiceSettings settings = atlasSettings.settingsFor(serviceId);
		MeterRegistry meters = meters(meterRegistry);
		return new AtlasLoadBalancer(serviceId,
				loadBalancerClientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class),
				// Until strategies are registered by name: the built-in one of this name.
				Strategy.fromValue(settings.strategy())
					.newBalancer(serviceId, parser, settings.allZeroWeights(), meters),
				stats, meters);
	}

}
