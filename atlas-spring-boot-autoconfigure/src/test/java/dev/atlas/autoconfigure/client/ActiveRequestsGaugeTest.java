package dev.atlas.autoconfigure.client;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;

import com.alibaba.cloud.nacos.NacosServiceInstance;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultRequestContext;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerStatsAutoConfiguration;
import org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Cloud LoadBalancer's {@code loadbalancer.requests.active} gauge, which Atlas
 * turns on, stays one gauge per instance showing its requests in flight when the registry
 * hands out a new object for the instance whose equality includes its metadata (Nacos
 * after a weight change, Spring Cloud's {@code DefaultServiceInstance}).
 */
@ExtendWith(OutputCaptureExtension.class)
class ActiveRequestsGaugeTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, AtlasClientAutoConfiguration.class,
						LoadBalancerAutoConfiguration.class, LoadBalancerStatsAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.loadbalancer.stats.micrometer.enabled=true");

	/**
	 * Micrometer warns of a second registration once per JVM and logs the next ones at
	 * DEBUG: at DEBUG every one shows, whatever ran before in this JVM.
	 */
	@BeforeEach
	void everyDoubleRegistrationIsLogged() {
		LoggingSystem.get(getClass().getClassLoader()).setLogLevel(MeterRegistry.class.getName(), LogLevel.DEBUG);
	}

	@AfterEach
	void resetLogLevel() {
		LoggingSystem.get(getClass().getClassLoader()).setLogLevel(MeterRegistry.class.getName(), null);
	}

	static Stream<Arguments> instances() {
		Function<String, ServiceInstance> nacos = (weight) -> {
			NacosServiceInstance instance = new NacosServiceInstance();
			instance.setServiceId("user-service");
			instance.setInstanceId("10.0.0.1#8080#DEFAULT#DEFAULT_GROUP@@user-service");
			instance.setHost("10.0.0.1");
			instance.setPort(8080);
			instance.setMetadata(Map.of("nacos.weight", weight, "nacos.healthy", "true"));
			return instance;
		};
		Function<String, ServiceInstance> plain = (weight) -> new DefaultServiceInstance("u1", "user-service",
				"10.0.0.1", 8080, false, Map.of("weight", weight));
		return Stream.of(Arguments.of("Nacos", nacos), Arguments.of("DefaultServiceInstance", plain));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("instances")
	void oneActiveGaugePerInstanceAcrossAWeightChange(String registry, Function<String, ServiceInstance> instance,
			CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).getBean(MicrometerStatsLoadBalancerLifecycle.class).isNotNull();
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			Collection<LoadBalancerLifecycle> lifecycles = context.getBean(LoadBalancerClientFactory.class)
				.getInstances("user-service", LoadBalancerLifecycle.class)
				.values();
			ServiceInstance before = instance.apply("1");
			ServiceInstance after = instance.apply("5");
			assertThat(after).as("the registry's new object after the weight change").isNotEqualTo(before);

			Call first = Call.start(lifecycles, before);
			assertThat(activeGauges(meters)).singleElement().extracting(Gauge::value).isEqualTo(1.0);
			Call second = Call.start(lifecycles, after);
			Call third = Call.start(lifecycles, after);
			List<Gauge> gauges = activeGauges(meters);
			assertThat(gauges).singleElement().extracting(Gauge::value).isEqualTo(3.0);
			first.complete(lifecycles);
			assertThat(gauges.get(0).value()).isEqualTo(2.0);
			second.complete(lifecycles);
			third.complete(lifecycles);
			assertThat(activeGauges(meters)).singleElement().extracting(Gauge::value).isEqualTo(0.0);
			Gauge gauge = gauges.get(0);
			assertThat(gauge.getId().getTag("serviceId")).isEqualTo("user-service");
			assertThat(gauge.getId().getTag("serviceInstance.instanceId")).isEqualTo(before.getInstanceId());
			assertThat(gauge.getId().getTag("serviceInstance.host")).isEqualTo("10.0.0.1");
			assertThat(gauge.getId().getTag("serviceInstance.port")).isEqualTo("8080");
			assertThat(meters.find("loadbalancer.requests.success").timer().count()).isEqualTo(3);
		});
		assertThat(output).doesNotContain("has been already registered");
	}

	/**
	 * Without a MeterRegistry Atlas's per-service meters go nowhere; they went to one
	 * registry shared by every application context in the JVM, so the second context
	 * calling a service registered its {@code atlas.warmup.instances} gauge again.
	 */
	@Test
	void contextsWithoutAMeterRegistryRegisterNoMeterTwice(CapturedOutput output) {
		ApplicationContextRunner withoutMeters = new ApplicationContextRunner().withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class));
		for (int i = 0; i < 2; i++) {
			withoutMeters.run((context) -> assertThat(
					context.getBean(LoadBalancerClientFactory.class).getInstance("gauge-test-service"))
				.isNotNull());
		}
		assertThat(output).doesNotContain("has been already registered");
	}

	private static List<Gauge> activeGauges(MeterRegistry meters) {
		return List.copyOf(meters.find("loadbalancer.requests.active").gauges());
	}

	/**
	 * One load-balanced call, reported to the lifecycles as Spring Cloud's clients do.
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	private record Call(Request<Object> request, Response<ServiceInstance> response) {

		static Call start(Collection<LoadBalancerLifecycle> lifecycles, ServiceInstance instance) {
			Call call = new Call(new DefaultRequest<>(new DefaultRequestContext()), new DefaultResponse(instance));
			lifecycles.forEach((lifecycle) -> lifecycle.onStartRequest(call.request, call.response));
			return call;
		}

		void complete(Collection<LoadBalancerLifecycle> lifecycles) {
			lifecycles.forEach((lifecycle) -> lifecycle
				.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, this.request, this.response)));
		}

	}

}
