package dev.atlas.autoconfigure.loadbalancer;

import java.util.List;
import java.util.Map;

import com.alibaba.cloud.nacos.NacosServiceAutoConfiguration;
import com.alibaba.cloud.nacos.discovery.NacosDiscoveryAutoConfiguration;
import com.alibaba.cloud.nacos.loadbalancer.LoadBalancerNacosAutoConfiguration;
import com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancer;
import com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancerClientConfiguration;
import com.alibaba.cloud.nacos.util.UtilIPv6AutoConfiguration;
import dev.atlas.autoconfigure.nacos.AtlasNacosAutoConfiguration;
import dev.atlas.autoconfigure.registry.AtlasRegistryAutoConfiguration;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class AtlasLoadBalancerAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, AtlasRegistryAutoConfiguration.class,
						AtlasNacosAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://a:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[0].metadata.weight=0",
				"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://b:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[1].metadata.weight=3");

	private static ReactiveLoadBalancer<ServiceInstance> balancerOf(ApplicationContext context, String serviceId) {
		return context.getBean(LoadBalancerClientFactory.class).getInstance(serviceId);
	}

	@Test
	void atlasIsTheBalancerOfEveryServiceAndHonoursWeights() {
		this.runner.run((context) -> {
			ReactiveLoadBalancer<ServiceInstance> balancer = balancerOf(context, "user-service");
			assertThat(balancer).isInstanceOf(AtlasLoadBalancer.class);
			assertThat(((AtlasLoadBalancer) balancer).strategyName()).isEqualTo("weighted-random");
			for (int i = 0; i < 50; i++) {
				// a has weight 0 (drained): every pick is b.
				Response<ServiceInstance> response = Mono.from(balancer.choose(new DefaultRequest<>())).block();
				assertThat(response.getServer().getHost()).isEqualTo("b");
			}
			assertThat(balancerOf(context, "another-service")).isInstanceOf(AtlasLoadBalancer.class);
		});
	}

	@Test
	void disabledGivesBackSpringCloudDefaults() {
		this.runner.withPropertyValues("atlas.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(AtlasLoadBalancerAutoConfiguration.class);
			assertThat(balancerOf(context, "user-service")).isInstanceOf(RoundRobinLoadBalancer.class);
		});
	}

	@Test
	void globalAndPerServiceStrategies() {
		this.runner
			.withPropertyValues("atlas.loadbalancer.strategy=smooth-round-robin",
					"atlas.services.user-service.loadbalancer.strategy=WEIGHTED_RANDOM")
			.run((context) -> {
				assertThat(((AtlasLoadBalancer) balancerOf(context, "user-service")).strategyName())
					.isEqualTo("weighted-random");
				assertThat(((AtlasLoadBalancer) balancerOf(context, "order-service")).strategyName())
					.isEqualTo("smooth-round-robin");
			});
	}

	@Test
	void allZeroWeightsRejectIsApplied() {
		this.runner
			.withPropertyValues("atlas.loadbalancer.all-zero-weights=reject",
					"spring.cloud.discovery.client.simple.instances.user-service[1].metadata.weight=0")
			.run((context) -> assertThat(
					Mono.from(balancerOf(context, "user-service").choose(new DefaultRequest<>())).block().hasServer())
				.isFalse());
	}

	@Test
	void unknownStrategyFailsStartupNamingPropertyAndAllowedValues() {
		this.runner.withPropertyValues("atlas.loadbalancer.strategy=round-robin").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("atlas.loadbalancer.strategy")
				.contains("'round-robin' is not a load-balancing strategy; allowed values: weighted-random, "
						+ "smooth-round-robin");
		});
	}

	@Test
	void unknownPolicyPerServiceFailsStartupNamingPropertyAndAllowedValues() {
		this.runner.withPropertyValues("atlas.services.user-service.loadbalancer.all-zero-weights=open")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure()))
					.contains("atlas.services.user-service.loadbalancer.all-zero-weights")
					.contains("allowed values: fail-open, reject");
			});
	}

	@Test
	void aBalancerDeclaredForOneServiceByTheApplicationWins() {
		this.runner.withUserConfiguration(RandomForUserService.class).run((context) -> {
			assertThat(balancerOf(context, "user-service")).isInstanceOf(RandomLoadBalancer.class);
			assertThat(balancerOf(context, "order-service")).isInstanceOf(AtlasLoadBalancer.class);
		});
	}

	@Test
	void startupSaysAtlasIsInCharge(CapturedOutput output) {
		this.runner.run((context) -> assertThat(output)
			.contains("Atlas is the load balancer of every @LoadBalanced client: strategy=weighted-random, "
					+ "all-zero-weights=fail-open"));
	}

	@Test
	void warnsThatSpringsWeightedSupplierWouldCountWeightsTwice(CapturedOutput output) {
		this.runner.withPropertyValues("spring.cloud.loadbalancer.configurations=weighted")
			.run((context) -> assertThat(output).contains("weights would count twice"));
		this.runner.run((context) -> assertThat(output).containsOnlyOnce("weights would count twice"));
	}

	@Test
	void atlasIsInChargeWhenNacosLoadBalancerIsAlsoEnabled(CapturedOutput output) {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(UtilIPv6AutoConfiguration.class, NacosServiceAutoConfiguration.class,
							NacosDiscoveryAutoConfiguration.class, LoadBalancerNacosAutoConfiguration.class))
			.withPropertyValues("spring.cloud.loadbalancer.nacos.enabled=true",
					"spring.cloud.nacos.discovery.server-addr=127.0.0.1:18848")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(balancerOf(context, "user-service")).isInstanceOf(AtlasLoadBalancer.class);
				assertThat(output).contains("Both Atlas and Spring Cloud Alibaba's NacosLoadBalancer are enabled")
					.contains("Atlas is the load balancer in charge");
				// The default configurations of a load-balancer context are registered in
				// hash order; Atlas
				// must win in either order.
				for (List<Class<?>> order : List.of(
						List.<Class<?>>of(NacosLoadBalancerClientConfiguration.class,
								AtlasLoadBalancerClientConfiguration.class),
						List.<Class<?>>of(AtlasLoadBalancerClientConfiguration.class,
								NacosLoadBalancerClientConfiguration.class))) {
					try (AnnotationConfigApplicationContext child = childContext(context, order)) {
						assertThat(child.getBean(ReactorServiceInstanceLoadBalancer.class))
							.as("registered in order %s", order)
							.isInstanceOf(AtlasLoadBalancer.class);
					}
				}
			});
	}

	@Test
	void withoutAtlasTheNacosFlagStillGivesNacosLoadBalancer() {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(UtilIPv6AutoConfiguration.class, NacosServiceAutoConfiguration.class,
							NacosDiscoveryAutoConfiguration.class, LoadBalancerNacosAutoConfiguration.class))
			.withPropertyValues("atlas.enabled=false", "spring.cloud.loadbalancer.nacos.enabled=true",
					"spring.cloud.nacos.discovery.server-addr=127.0.0.1:18848")
			.run((context) -> assertThat(balancerOf(context, "user-service")).isInstanceOf(NacosLoadBalancer.class));
	}

	/**
	 * A load-balancer child context built like NamedContextFactory does, with a chosen
	 * registration order.
	 */
	private static AnnotationConfigApplicationContext childContext(ApplicationContext parent,
			List<Class<?>> defaultConfigurations) {
		AnnotationConfigApplicationContext child = new AnnotationConfigApplicationContext();
		child.setParent(parent);
		child.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("loadbalancer",
					Map.of(LoadBalancerClientFactory.PROPERTY_NAME, "user-service")));
		defaultConfigurations.forEach(child::register);
		child.register(LoadBalancerClientConfiguration.class);
		child.refresh();
		return child;
	}

	private static String messages(Throwable failure) {
		StringBuilder all = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			all.append(t.getMessage()).append('\n');
		}
		return all.toString();
	}

	@Configuration(proxyBeanMethods = false)
	@LoadBalancerClient(name = "user-service", configuration = RandomConfiguration.class)
	static class RandomForUserService {

	}

	static class RandomConfiguration {

		@Bean
		ReactorLoadBalancer<ServiceInstance> randomLoadBalancer(Environment environment,
				LoadBalancerClientFactory factory) {
			String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
			return new RandomLoadBalancer(factory.getLazyProvider(name, ServiceInstanceListSupplier.class), name);
		}

	}

}
