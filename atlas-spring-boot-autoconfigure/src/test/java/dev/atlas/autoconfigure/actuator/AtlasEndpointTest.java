package dev.atlas.autoconfigure.actuator;

import java.util.Collection;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.lifecycle.AtlasLifecycleAutoConfiguration;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;

@ExtendWith(OutputCaptureExtension.class)
class AtlasEndpointTest {

	private final long now = System.currentTimeMillis();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, AtlasLifecycleAutoConfiguration.class,
						AtlasActuatorAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://old:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[0].instance-id=old",
				"spring.cloud.discovery.client.simple.instances.user-service[0].metadata.weight=2",
				"spring.cloud.discovery.client.simple.instances.user-service[0].metadata.zone=A",
				"spring.cloud.discovery.client.simple.instances.user-service[0].metadata.atlas.registered-at="
						+ (this.now - 3_600_000),
				"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://new:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[1].instance-id=new",
				"spring.cloud.discovery.client.simple.instances.user-service[1].metadata.weight=2",
				"spring.cloud.discovery.client.simple.instances.user-service[1].metadata.version=v2",
				"spring.cloud.discovery.client.simple.instances.user-service[1].metadata.atlas.registered-at="
						+ (this.now - 30_000),
				"atlas.gray.isolate-baseline=false", "management.endpoints.web.exposure.include=atlas");

	/**
	 * Chooses and reports the request start and completion, as Spring Cloud's HTTP
	 * clients do.
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static void call(ApplicationContext context, int times) {
		LoadBalancerClientFactory factory = context.getBean(LoadBalancerClientFactory.class);
		Collection<LoadBalancerLifecycle> lifecycles = factory.getInstances("user-service", LoadBalancerLifecycle.class)
			.values();
		for (int i = 0; i < times; i++) {
			DefaultRequest<Object> request = new DefaultRequest<>();
			Response<ServiceInstance> response = Mono.from(factory.getInstance("user-service").choose(request)).block();
			lifecycles.forEach((lifecycle) -> lifecycle.onStartRequest(request, response));
			lifecycles.forEach((lifecycle) -> lifecycle
				.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, request, response)));
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void viewShowsEveryDecisionInItsDocumentedShape() {
		this.runner.run((context) -> {
			AtlasEndpoint endpoint = context.getBean(AtlasEndpoint.class);
			assertThat(endpoint.service("user-service")).as("never called yet").isNull();
			long callsStarted = System.currentTimeMillis();
			call(context, 1_000);
			Map<String, Object> all = endpoint.atlas();
			assertThat(all).containsOnlyKeys("services", "lifecycle");
			assertThat((Map<String, Object>) all.get("lifecycle")).containsOnlyKeys("registered", "registration",
					"registeredAt", "listedAt", "ready", "state");
			Map<String, Object> service = endpoint.service("user-service");
			assertThat(service)
				.containsOnlyKeys("strategy", "stale", "instances", "retryBudget", "saturated", "zoneRouting", "rules",
						"rulesChangedAt")
				.containsEntry("zoneRouting", null)
				.containsEntry("strategy", "weighted-random")
				.containsEntry("saturated", 0L)
				.containsEntry("stale", false)
				.containsEntry("rulesChangedAt", null);
			assertThat((Map<String, Object>) service.get("retryBudget"))
				.containsOnlyKeys("enabled", "balance", "requests", "retries", "exhausted")
				.containsEntry("enabled", true)
				.hasEntrySatisfying("balance",
						(balance) -> assertThat((Double) balance).as("at least the reserve, 10/s × 10 s")
							.isGreaterThanOrEqualTo(100.0))
				.containsEntry("retries", 0L)
				.containsEntry("exhausted", 0L);
			Map<String, Object> rules = (Map<String, Object>) service.get("rules");
			assertThat(rules)
				.containsOnlyKeys("strategy", "all-zero-weights", "gray-enabled", "gray", "warmup", "outlier",
						"least-request", "peak-ewma", "hash", "weighted-round-robin", "affinity", "failure-statuses",
						"max-in-flight-per-instance", "retry")
				.containsEntry("strategy", "weighted-random")
				.containsEntry("all-zero-weights", "fail-open")
				.containsEntry("max-in-flight-per-instance", 0);
			assertThat((Map<String, Object>) rules.get("weighted-round-robin"))
				.containsOnlyKeys("blackout-period", "weight-expiration-period", "weight-update-period",
						"error-utilization-penalty")
				.containsEntry("blackout-period", "10s");
			assertThat((Map<String, Object>) rules.get("retry"))
				.containsOnlyKeys("enabled", "ratio", "min-retries-per-second", "window")
				.containsEntry("window", "10s");
			assertThat((Map<String, Object>) rules.get("gray")).containsEntry("header", "X-Service-Version")
				.containsEntry("fallback", "baseline")
				.containsEntry("canary-percentages", Map.of());
			assertThat((Map<String, Object>) rules.get("warmup")).containsEntry("duration", "1m");
			assertThat((Map<String, Object>) ((Map<String, Object>) rules.get("outlier")).get("probe"))
				.containsEntry("type", "tcp");
			List<Map<String, Object>> instances = (List<Map<String, Object>>) service.get("instances");
			assertThat(instances).hasSize(2);
			Map<String, Object> old = instances.get(0);
			Map<String, Object> young = instances.get(1);
			assertThat(old).containsOnlyKeys("instanceId", "host", "port", "tag", "cluster", "weight",
					"effectiveWeight", "warmup", "picks", "inFlight", "latencyMs", "peakEwmaMs", "failureRate",
					"outlier", "reportedWeight");
			assertThat((Map<String, Object>) old.get("outlier")).containsExactly(entry("ejected", false),
					entry("ejectedAt", null), entry("ejectedUntil", null), entry("timesEjected", 0),
					entry("consecutive5xx", 0), entry("consecutiveGatewayFailures", 0));
			assertThat(old).containsEntry("instanceId", "old")
				.containsEntry("cluster", "a")
				.containsEntry("weight", 2.0)
				.containsEntry("effectiveWeight", 2.0)
				.containsEntry("warmup", 1.0);
			// Registered 30 s before the test began, with a 60 s warmup: about half its
			// weight, by its age when
			// the factor was last computed (once a second, rounded up to whole percent),
			// between the calls.
			double youngest = (callsStarted - (this.now - 30_000)) / 60_000.0;
			double oldest = (System.currentTimeMillis() - (this.now - 30_000)) / 60_000.0;
			assertThat(young).containsEntry("tag", "v2").containsEntry("weight", 2.0);
			double warmup = (Double) young.get("warmup");
			assertThat(warmup).isBetween(youngest - 0.02, oldest + 0.02);
			assertThat((Double) young.get("effectiveWeight")).isCloseTo(2 * warmup, within(0.001));
			long oldPicks = (Long) old.get("picks");
			long youngPicks = (Long) young.get("picks");
			assertThat(oldPicks + youngPicks).isEqualTo(1_000);
			// 2 : 2 x warmup by effective weight, so a share of warmup / (1 + warmup):
			// about
			// 1/3, more when the context took long to start (the test's clock starts
			// before it); sigma 1.5 points over 1,000 picks, tolerance 6 points.
			assertThat(youngPicks / 1_000.0).isBetween(youngest / (1 + youngest) - 0.06, oldest / (1 + oldest) + 0.06);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("atlas.picks")
				.tags("service", "user-service", "strategy", "weighted-random")
				.functionCounter()
				.count()).isEqualTo(1_000);
			assertThat(meters.get("atlas.warmup.instances").tag("service", "user-service").gauge().value())
				.isEqualTo(1);
		});
	}

	@Test
	@SuppressWarnings("unchecked")
	void instancesThatShareAnIdAreRowsOfTheirOwn() {
		// Two instances report one id from two addresses: two rows, each with its own
		// count (exactly half each, by smooth round robin).
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class,
					AtlasActuatorAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
					SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues(
					"spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://10.0.0.1:8080",
					"spring.cloud.discovery.client.simple.instances.user-service[0].instance-id=user-service-8080",
					"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://10.0.0.2:8080",
					"spring.cloud.discovery.client.simple.instances.user-service[1].instance-id=user-service-8080",
					"atlas.loadbalancer.strategy=smooth-round-robin", "management.endpoints.web.exposure.include=atlas")
			.run((context) -> {
				call(context, 1_000);
				List<Map<String, Object>> instances = (List<Map<String, Object>>) context.getBean(AtlasEndpoint.class)
					.service("user-service")
					.get("instances");
				assertThat(instances).extracting((row) -> row.get("instanceId"))
					.containsExactly("user-service-8080", "user-service-8080");
				assertThat(instances).extracting((row) -> row.get("host")).containsExactly("10.0.0.1", "10.0.0.2");
				assertThat(instances).extracting((row) -> row.get("picks")).containsExactly(500L, 500L);
				assertThat(instances).extracting((row) -> row.get("inFlight")).containsExactly(0L, 0L);
			});
	}

	@Test
	void startupListsFeaturesAndWarnsAboutATtlLongerThanTheDrainWithoutEvents(CapturedOutput output) {
		this.runner.withPropertyValues("atlas.registry.refresh-on-events=false", "spring.cloud.loadbalancer.zone=sh")
			.run((context) -> {
				assertThat(output)
					.contains("gray=on (header X-Service-Version, fallback baseline); affinity=cluster 'sh';"
							+ " warmup=60s; outlier=on (5 gateway failures or 5 5xx in a row, base 30000ms, max 50.0 %,"
							+ " panic below 50.0 %, probe tcp); register-when-ready=true;"
							+ " graceful-shutdown=drain 10000ms; refresh-on-events=false");
				assertThat(output).contains("spring.cloud.loadbalancer.cache.ttl (35000 ms) is longer than "
						+ "atlas.lifecycle.drain (10000 ms)");
			});
	}

}
