package dev.atlas.autoconfigure.loadbalancer;

import java.util.List;
import java.util.Set;

import dev.atlas.autoconfigure.lifecycle.LifecycleProperties;
import dev.atlas.autoconfigure.registry.RegistryProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportSelector;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which services the startup line names as having the application's own balancer: read
 * from the {@code @LoadBalancerClient} configuration classes and what they import.
 */
class StartupReportTest {

	private static LoadBalancerClientSpecification spec(String name, Class<?>... configuration) {
		return new LoadBalancerClientSpecification(name, configuration);
	}

	@Test
	void aBalancerDeclaredDirectlyOrThroughImportsIsFoundOthersAreUnknownOrNot() {
		StartupReport.OwnBalancers balancers = StartupReport.ownBalancers(List.of(spec("direct", Declares.class),
				spec("imported", ImportsIt.class), spec("nested", ImportsImporter.class),
				spec("conditional", Conditional.class), spec("selected", ImportsSelector.class),
				spec("filters-only", NoBalancer.class), spec("default.x", Declares.class)));
		assertThat(balancers.own()).containsExactly("direct", "imported", "nested");
		assertThat(balancers.unknown()).containsExactly("conditional", "selected");
	}

	@Test
	void theStartupLineSaysOnlyWhatItKnows() {
		assertThat(StartupReport.ownBalancersClause(new StartupReport.OwnBalancers(Set.of("a"), Set.of("b"))))
			.isEqualTo(" except a (the application's own balancer; Atlas does not route it), perhaps b "
					+ "(the @LoadBalancerClient configuration may declare a balancer; the first call says)");
		assertThat(StartupReport.ownBalancersClause(new StartupReport.OwnBalancers(Set.of(), Set.of()))).isEmpty();
	}

	@Configuration(proxyBeanMethods = false)
	static class Declares {

		@Bean
		ReactorLoadBalancer<ServiceInstance> roundRobin() {
			return new RoundRobinLoadBalancer(null, "svc");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Declares.class)
	static class ImportsIt {

	}

	@Configuration(proxyBeanMethods = false)
	@Import(ImportsIt.class)
	static class ImportsImporter {

	}

	@Configuration(proxyBeanMethods = false)
	static class Conditional {

		@Bean
		@ConditionalOnMissingBean
		ReactorLoadBalancer<ServiceInstance> roundRobin() {
			return new RoundRobinLoadBalancer(null, "svc");
		}

	}

	static class Selector implements ImportSelector {

		@Override
		public String[] selectImports(AnnotationMetadata metadata) {
			return new String[] { Declares.class.getName() };
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Selector.class)
	static class ImportsSelector {

	}

	@Configuration(proxyBeanMethods = false)
	static class NoBalancer {

	}

	/**
	 * A TTL longer than the drain only matters where nothing refreshes callers on a
	 * change: Nacos (on the test class path) with Atlas's change source subscribed, or
	 * any registry with {@code refresh-on-events}, gets no warning.
	 */
	@Test
	void theTtlLongerThanTheDrainWarnsOnlyWhenNothingRefreshesCallersOnChange() {
		LifecycleProperties lifecycle = new LifecycleProperties();
		RegistryProperties registry = new RegistryProperties();
		MockEnvironment nacos = new MockEnvironment().withProperty("spring.cloud.loadbalancer.cache.ttl", "35s");
		assertThat(StartupReport.conflicts(lifecycle, registry, nacos, true)).isEmpty();
		assertThat(StartupReport.conflicts(lifecycle, registry, nacos, false)).singleElement()
			.asString()
			.contains("does not refresh callers on change");
		MockEnvironment consul = new MockEnvironment().withProperty("spring.cloud.loadbalancer.cache.ttl", "35s")
			.withProperty("spring.cloud.nacos.discovery.enabled", "false");
		assertThat(StartupReport.conflicts(lifecycle, registry, consul, false)).isEmpty();
		registry.setRefreshOnEvents(false);
		assertThat(StartupReport.conflicts(lifecycle, registry, consul, false)).hasSize(1);
	}

}
