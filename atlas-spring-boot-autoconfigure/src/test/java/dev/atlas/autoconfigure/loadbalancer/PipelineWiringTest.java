package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.util.List;
import java.util.Set;

import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.outlier.OutlierRules;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import dev.atlas.loadbalancer.weighting.SlowStart;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The stage as the auto-configuration assembles it: the built-in concerns are beans of
 * their own, in their order; the application's filter and adjuster beans join in theirs
 * (an unordered one after the built-in ones), retry avoidance always last; a bean of a
 * built-in type replaces the built-in one; a concern turned off is left out.
 */
class PipelineWiringTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://s1:8080");

	private static AtlasServiceInstanceListSupplier stage(ApplicationContext context) {
		return AtlasServiceInstanceListSupplier.find(context.getBean(LoadBalancerClientFactory.class)
			.getInstance("user-service", ServiceInstanceListSupplier.class));
	}

	private static List<Class<?>> types(List<?> steps) {
		return steps.stream().<Class<?>>map(Object::getClass).toList();
	}

	@Test
	void builtInConcernsInTheirOrder() {
		this.runner.run((context) -> {
			assertThat(types(stage(context).adjusters())).containsExactly(SlowStart.class);
			assertThat(types(stage(context).filters())).containsExactly(GrayRouter.class, OutlierEjection.class,
					ClusterAffinity.class, RetryAvoidance.class);
		});
	}

	@Test
	void applicationStepsJoinInTheirOrder() {
		this.runner.withUserConfiguration(OwnSteps.class).run((context) -> {
			List<CandidateFilter> filters = stage(context).filters();
			assertThat(types(filters)).startsWith(GrayRouter.class)
				.endsWith(ClusterAffinity.class, Unordered.class, RetryAvoidance.class);
			assertThat(filters.get(1)).isSameAs(context.getBean("betweenGrayAndAffinity"));
			assertThat(stage(context).adjusters()).last().isSameAs(context.getBean("afterWarmup"));
		});
	}

	@Test
	void aBeanOfABuiltInTypeReplacesIt() {
		SlowStart own = new SlowStart(WarmupRules.OFF, Clock.systemUTC());
		this.runner.withBean(SlowStart.class, () -> own)
			.run((context) -> assertThat(stage(context).adjusters()).containsExactly(own));
	}

	@Test
	void aConcernTurnedOffIsLeftOut() {
		this.runner.withPropertyValues("atlas.gray.enabled=false", "atlas.affinity.enabled=false")
			.run((context) -> assertThat(types(stage(context).filters())).containsExactly(OutlierEjection.class,
					RetryAvoidance.class));
	}

	@Test
	void outlierDetectionTurnedOnForOneServiceWhileOffGlobally() {
		this.runner
			.withPropertyValues("atlas.outlier.enabled=false", "atlas.services.user-service.outlier.enabled=true",
					"atlas.services.user-service.outlier.consecutive5xx=3")
			.run((context) -> assertThat(outlierRules(context)).returns(true, OutlierRules::enabled)
				.returns(3, OutlierRules::consecutive5xx));
		this.runner.withPropertyValues("atlas.outlier.enabled=false")
			.run((context) -> assertThat(outlierRules(context).enabled()).isFalse());
	}

	private static OutlierRules outlierRules(ApplicationContext context) {
		return stage(context).filters()
			.stream()
			.filter(OutlierEjection.class::isInstance)
			.map((filter) -> ((OutlierEjection) filter).detector().rules())
			.findFirst()
			.orElseThrow();
	}

	@Test
	void warmupTurnedOnForOneServiceWhileOffGlobally() {
		this.runner.withPropertyValues("atlas.warmup.enabled=false", "atlas.services.user-service.warmup.enabled=true")
			.run((context) -> assertThat(((SlowStart) stage(context).adjusters().get(0)).rules().enabled()).isTrue());
		this.runner.withPropertyValues("atlas.warmup.enabled=false")
			.run((context) -> assertThat(((SlowStart) stage(context).adjusters().get(0)).rules().enabled()).isFalse());
	}

	@Test
	void strategyNamesMustBeKebabCaseAndUnique() {
		StrategyFactory camel = factory("leastRequest");
		assertThatIllegalStateException().isThrownBy(() -> new StrategyRegistry(List.of(camel)))
			.withMessageContaining("'leastRequest'")
			.withMessageContaining("lower-case kebab-case");
		assertThatIllegalStateException()
			.isThrownBy(() -> new StrategyRegistry(List.of(factory("least-request"), factory("least-request"))))
			.withMessageContaining("Two load-balancing strategies are registered as 'least-request'");
	}

	@Test
	void anApplicationStrategyNamedAsABuiltInOneReplacesIt() {
		StrategyFactory own = factory("least-request");
		StrategyFactory builtIn = LeastRequestBalancer.factory((service) -> LeastRequestRules.DEFAULTS);
		assertThat(new StrategyRegistry(List.of(builtIn, own), Set.of(builtIn)).factory("least-request")).isSameAs(own);
		assertThat(new StrategyRegistry(List.of(own, builtIn), Set.of(builtIn)).factory("least-request")).isSameAs(own);
		// Made with Atlas's public factory method by the application, it is the
		// application's: two of them still clash.
		StrategyFactory alsoOwn = LeastRequestBalancer.factory((service) -> new LeastRequestRules(3, 1.0));
		assertThatIllegalStateException()
			.isThrownBy(() -> new StrategyRegistry(List.of(builtIn, alsoOwn, own), Set.of(builtIn)))
			.withMessageContaining("Two load-balancing strategies are registered as 'least-request'");
	}

	@Test
	void anApplicationBeanNamedAsABuiltInStrategyIsUsed() {
		this.runner
			.withBean("myLeastRequest", StrategyFactory.class,
					() -> LeastRequestBalancer.factory((service) -> new LeastRequestRules(4, 1.0)))
			.withPropertyValues("atlas.loadbalancer.strategy=least-request")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(StrategyRegistry.class).factory("least-request"))
					.isSameAs(context.getBean("myLeastRequest"));
			});
	}

	@Test
	void ringHashWithoutAKeyFailsStartupNamingWhatToSet() {
		this.runner.withPropertyValues("atlas.services.user-service.loadbalancer.strategy=ring-hash").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessage(
						"Invalid atlas.services.user-service.loadbalancer.strategy: ring-hash needs a hash key; set "
								+ "atlas.services.user-service.loadbalancer.hash.header (a request header, e.g. X-User-Id) or "
								+ "atlas.services.user-service.loadbalancer.hash.cookie (a cookie name)");
		});
		this.runner.withPropertyValues("atlas.loadbalancer.strategy=ring-hash", "atlas.loadbalancer.hash.cookie=tenant")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void anUnknownPerServiceStrategyFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("atlas.services.user-service.loadbalancer.strategy=fastest").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("Invalid atlas.services.user-service.loadbalancer.strategy: 'fastest'");
		});
	}

	private static StrategyFactory factory(String name) {
		return StrategyFactory.of(name, (settings) -> (candidates, context) -> -1);
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnSteps {

		@Bean
		@Order(CandidateFilter.GRAY_ORDER + 1)
		CandidateFilter betweenGrayAndAffinity() {
			return (candidates, request) -> candidates;
		}

		@Bean
		CandidateFilter unordered() {
			return new Unordered();
		}

		@Bean
		@Order(WeightAdjuster.WARMUP_ORDER + 1)
		WeightAdjuster afterWarmup() {
			return (candidates) -> candidates;
		}

	}

	static class Unordered implements CandidateFilter {

		@Override
		public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
			return candidates;
		}

	}

}
