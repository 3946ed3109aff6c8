package dev.atlas.autoconfigure.client;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClientsProperties;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * The per-request look-ups of a service's load balancer and lifecycle beans are answered
 * from a cache, with the beans of the service's context, and only for singletons.
 */
class AtlasLoadBalancerClientFactoryTest {

	private final GenericApplicationContext parent = new GenericApplicationContext();

	private final AtlasLoadBalancerClientFactory factory = new AtlasLoadBalancerClientFactory(
			new LoadBalancerClientsProperties());

	AtlasLoadBalancerClientFactoryTest() {
		// as in an application: Spring Cloud's default configurations find the factory
		this.parent.registerBean(LoadBalancerClientFactory.class, () -> this.factory);
		this.parent.refresh();
		this.factory.setApplicationContext(this.parent);
	}

	@AfterEach
	void close() {
		this.factory.destroy();
		this.parent.close();
	}

	private void configure(Class<?>... configurations) {
		this.factory.setConfigurations(List.of(new LoadBalancerClientSpecification("default.service", configurations)));
	}

	@Test
	void aServicesLifecyclesAndLoadBalancerAreLookedUpOnceAndKept() {
		configure(Singletons.class);

		Map<String, LoadBalancerLifecycle> first = this.factory.getInstances("users", LoadBalancerLifecycle.class);
		ReactiveLoadBalancer<ServiceInstance> loadBalancer = this.factory.getInstance("users");

		assertThat(first).containsOnlyKeys("lifecycle");
		assertThat(this.factory.getInstances("users", LoadBalancerLifecycle.class)).isSameAs(first);
		assertThat(loadBalancer).isInstanceOf(RoundRobinLoadBalancer.class).isSameAs(this.factory.getInstance("users"));
		// what the service's own context holds
		assertThat(first.get("lifecycle")).isSameAs(this.factory.getInstance("users", LoadBalancerLifecycle.class));
		assertThat(this.factory.getInstances("orders", LoadBalancerLifecycle.class)).isNotSameAs(first)
			.containsOnlyKeys("lifecycle");
	}

	@Test
	void otherTypesAreLookedUpAsSpringCloudDoes() {
		configure(Singletons.class);

		assertThat(this.factory.getInstances("users", ServiceInstanceListSupplier.class))
			.isNotSameAs(this.factory.getInstances("users", ServiceInstanceListSupplier.class));
	}

	@Test
	void aServicesBeanOfAClassIsLookedUpOnceWhenASingletonAndEveryTimeOtherwise() {
		configure(Singletons.class, PrototypeLifecycle.class);

		Object supplier = this.factory.getInstance("users", ServiceInstanceListSupplier.class, new Class<?>[0]);
		assertThat(supplier).isNotNull()
			.isSameAs(this.factory.getInstance("users", ServiceInstanceListSupplier.class, new Class<?>[0]));
		Object first = this.factory.getInstance("users", StringBuilder.class, new Class<?>[0]);
		assertThat(first).isNotNull()
			.isNotSameAs(this.factory.getInstance("users", StringBuilder.class, new Class<?>[0]));
		assertThat((Object) this.factory.getInstance("users", Thread.class, new Class<?>[0])).isNull();
	}

	@Test
	void aLifecycleThatIsNotASingletonIsLookedUpEveryTime() {
		configure(Singletons.class, PrototypeLifecycle.class);

		LoadBalancerLifecycle first = this.factory.getInstances("users", LoadBalancerLifecycle.class).get("perCall");

		assertThat(this.factory.getInstances("users", LoadBalancerLifecycle.class).get("perCall")).isNotSameAs(first);
	}

	@Test
	void theSupplierChainIsResolvedWhenFirstAskedForAndKept() {
		configure(Singletons.class);
		ObjectProvider<ServiceInstanceListSupplier> suppliers = this.factory.getLazyProvider("users",
				ServiceInstanceListSupplier.class);

		ServiceInstanceListSupplier first = suppliers.getIfAvailable();

		assertThat(first).isNotNull().isSameAs(suppliers.getIfAvailable()).isSameAs(suppliers.getObject());
	}

	@Test
	void aSupplierThatIsNotASingletonIsResolvedEveryTime() {
		configure(PrototypeSupplier.class);
		ObjectProvider<ServiceInstanceListSupplier> suppliers = this.factory.getLazyProvider("users",
				ServiceInstanceListSupplier.class);

		assertThat(suppliers.getIfAvailable()).isNotNull().isNotSameAs(suppliers.getIfAvailable());
	}

	@Test
	void destroyForgetsWhatWasKeptAndNoContextIsCreatedAfterwards() throws Exception {
		configure(Singletons.class);
		this.factory.getInstances("users", LoadBalancerLifecycle.class);
		this.factory.getInstance("users");

		this.factory.destroy();

		// a registry client's task, a request still on its way, a bean being destroyed:
		// no load balancer (kept answers would be returned without a context)
		Runnable lookUps = () -> {
			assertThat(this.factory.getInstances("users", LoadBalancerLifecycle.class)).isEmpty();
			assertThat(this.factory.getInstance("users")).isNull();
			assertThat(
					this.factory.<ServiceInstanceListSupplier>getInstance("orders", ServiceInstanceListSupplier.class))
				.isNull();
			assertThat(this.factory.<ServiceInstanceListSupplier>getInstance("orders",
					ServiceInstanceListSupplier.class, new Class<?>[0]))
				.isNull();
		};
		lookUps.run();
		CompletableFuture.runAsync(lookUps).get();
		assertThat(this.factory.getContextNames()).isEmpty();
	}

	@Configuration(proxyBeanMethods = false)
	static class Singletons {

		@Bean
		ServiceInstanceListSupplier supplier() {
			return mock(ServiceInstanceListSupplier.class);
		}

		@Bean
		ReactorServiceInstanceLoadBalancer loadBalancer(Environment environment,
				ObjectProvider<ServiceInstanceListSupplier> suppliers) {
			return new RoundRobinLoadBalancer(suppliers, LoadBalancerClientFactory.getName(environment));
		}

		@Bean
		LoadBalancerLifecycle<?, ?, ?> lifecycle() {
			return mock(LoadBalancerLifecycle.class);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrototypeSupplier {

		@Bean
		@Scope("prototype")
		ServiceInstanceListSupplier supplier() {
			return mock(ServiceInstanceListSupplier.class);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrototypeLifecycle {

		@Bean
		@Scope("prototype")
		LoadBalancerLifecycle<?, ?, ?> perCall() {
			return mock(LoadBalancerLifecycle.class);
		}

		@Bean
		@Scope("prototype")
		StringBuilder perCallBuilder() {
			return new StringBuilder();
		}

	}

}
