package dev.atlas.autoconfigure.loadbalancer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.gray.AtlasGrayAutoConfiguration;
import dev.atlas.autoconfigure.gray.AtlasGrayHeadersAutoConfiguration;
import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.propagation.AtlasPropagationAutoConfiguration;
import dev.atlas.autoconfigure.propagation.LaneTagger;
import dev.atlas.autoconfigure.propagation.PropagatedHeaders;
import dev.atlas.autoconfigure.runtime.RuntimeRules;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.outlier.Outcome;
import dev.atlas.loadbalancer.outlier.OutlierDetector;
import dev.atlas.loadbalancer.outlier.OutlierEjection;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.routing.CanaryMeters;
import dev.atlas.loadbalancer.routing.ClusterAffinity;
import dev.atlas.loadbalancer.routing.GrayRouter;
import dev.atlas.loadbalancer.routing.LaneRule;
import dev.atlas.loadbalancer.routing.RetryAvoidance;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.stats.InstanceStats;
import dev.atlas.loadbalancer.weighting.SlowStart;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rules changed at runtime, as Spring Cloud's refresh delivers them (a changed property
 * source, then an {@link EnvironmentChangeEvent}), on the wiring the auto-configuration
 * builds: per service, whole or not at all, keeping the state that still applies.
 */
@ExtendWith(OutputCaptureExtension.class)
class RuntimeRulesTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class,
				AtlasGrayAutoConfiguration.class, AtlasGrayHeadersAutoConfiguration.class,
				AtlasPropagationAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
				SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://u1:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://u2:8080",
				"spring.cloud.discovery.client.simple.instances.billing[0].uri=http://b1:8080",
				"atlas.services.user-service.gray.weights.v2=10");

	/** Changes properties as a refresh would, and publishes the event. */
	private static void change(AssertableApplicationContext context, Map<String, Object> properties) {
		MapPropertySource source = (MapPropertySource) context.getEnvironment()
			.getPropertySources()
			.get("runtime-change");
		if (source == null) {
			source = new MapPropertySource("runtime-change", new HashMap<>());
			context.getEnvironment().getPropertySources().addFirst(source);
		}
		source.getSource().putAll(properties);
		context.publishEvent(new EnvironmentChangeEvent(context, Set.copyOf(properties.keySet())));
	}

	private static ServiceInstance choose(AssertableApplicationContext context, String serviceId) {
		return Mono.from(balancer(context, serviceId).choose(new DefaultRequest<>())).block().getServer();
	}

	private static AtlasLoadBalancer balancer(AssertableApplicationContext context, String serviceId) {
		return (AtlasLoadBalancer) context.getBean(LoadBalancerClientFactory.class).getInstance(serviceId);
	}

	private static Pipeline pipeline(AssertableApplicationContext context, String serviceId) {
		return balancer(context, serviceId).pipeline().current();
	}

	private static <T> T bean(AssertableApplicationContext context, String serviceId, Class<T> type) {
		return context.getBean(LoadBalancerClientFactory.class).getInstance(serviceId, type);
	}

	private static double counter(AssertableApplicationContext context, String name, String serviceId) {
		var counter = context.getBean(MeterRegistry.class).find(name).tag("service", serviceId).counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void aValidChangeAppliesToItsServiceAloneAndIsLogged(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			choose(context, "billing");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.find(RuntimeRules.CHANGES_METER).tag("service", "billing").counter())
				.as("registered at 0 with the service, so that the first change is an increase")
				.isNotNull()
				.returns(0.0, Counter::count);
			assertThat(meters.find(RuntimeRules.REJECTED_METER).tag("service", "billing").counter()).isNotNull()
				.returns(0.0, Counter::count);
			assertThat(meters.find(RuntimeRules.REJECTED_METER).tag("service", RuntimeRules.GLOBAL_TAG).counter())
				.isNotNull();
			Pipeline billingBefore = pipeline(context, "billing");
			change(context, Map.of("atlas.services.user-service.loadbalancer.strategy", "smooth-round-robin",
					"atlas.services.user-service.gray.weights.v2", "50"));
			assertThat(balancer(context, "user-service").strategyName()).isEqualTo("smooth-round-robin");
			assertThat(pipeline(context, "billing")).as("another service's routing").isSameAs(billingBefore);
			assertThat(((GrayRouter) pipeline(context, "user-service").filters().get(0)).rules().canaryPercentages())
				.containsEntry("v2", 50.0);
			assertThat(output.getOut()).contains("Atlas rules of service 'user-service' changed: "
					+ "gray.canary-percentages {v2=10.0} → {v2=50.0}; strategy weighted-random → smooth-round-robin");
			assertThat(output.getOut()).doesNotContain("Atlas rules of service 'billing'");
			assertThat(counter(context, RuntimeRules.CHANGES_METER, "user-service")).isEqualTo(1);
			assertThat(bean(context, "user-service", ServiceRouting.class).changedAt()).isNotNull();
			assertThat(bean(context, "billing", ServiceRouting.class).changedAt()).isNull();
		});
	}

	@Test
	void thePerInstanceLimitChangesInPlaceAndTheStrategyKeepsItsState() {
		this.runner.withPropertyValues("atlas.loadbalancer.max-in-flight-per-instance=4").run((context) -> {
			choose(context, "user-service");
			InFlightLimit limit = bean(context, "user-service", InFlightLimit.class);
			assertThat(limit.max()).isEqualTo(4);
			Pipeline before = pipeline(context, "user-service");
			change(context, Map.of("atlas.services.user-service.loadbalancer.max-in-flight-per-instance", "1"));
			assertThat(limit.max()).isEqualTo(1);
			assertThat(pipeline(context, "user-service").strategy()).as("only the limit changed")
				.isSameAs(before.strategy());
			assertThat(bean(context, "billing", InFlightLimit.class).max()).as("another service").isEqualTo(4);
			change(context, Map.of("atlas.services.user-service.loadbalancer.max-in-flight-per-instance", "0"));
			assertThat(limit.max()).isEqualTo(InFlightLimit.OFF);
		});
	}

	@Test
	void aChangeKeepsWhatStillAppliesAndReplacesWhatChanged() {
		this.runner.run((context) -> {
			ServiceInstance instance = choose(context, "user-service");
			OutlierDetector detector = bean(context, "user-service", OutlierDetector.class);
			InstanceStats stats = bean(context, "user-service", InstanceStats.class);
			for (int i = 0; i < 5; i++) {
				detector.record(instance, Outcome.SERVER_ERROR, null);
			}
			assertThat(detector.health(instance).ejected()).isTrue();
			Pipeline before = pipeline(context, "user-service");
			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "20"));
			Pipeline after = pipeline(context, "user-service");
			assertThat(after).isNotSameAs(before);
			assertThat(after.strategy()).as("strategy (loadbalancer settings unchanged)").isSameAs(before.strategy());
			assertThat(after.adjusters()).as("warmup (its rules unchanged)").isEqualTo(before.adjusters());
			assertThat(after.filters().get(0)).as("gray router (its rules changed)")
				.isNotSameAs(before.filters().get(0))
				.isInstanceOf(GrayRouter.class);
			assertThat(after.filters().subList(1, 4)).as("outlier ejection, affinity, retry avoidance")
				.isEqualTo(before.filters().subList(1, 4));
			assertThat(detector.health(instance).ejected()).as("ejection kept").isTrue();
			assertThat(bean(context, "user-service", InstanceStats.class)).isSameAs(stats);

			change(context, Map.of("atlas.services.user-service.outlier.consecutive5xx", "2",
					"atlas.services.user-service.warmup.duration", "2m"));
			Pipeline third = pipeline(context, "user-service");
			assertThat(((OutlierEjection) third.filters().get(1)).detector()).isSameAs(detector);
			assertThat(detector.rules().consecutive5xx()).isEqualTo(2);
			assertThat(detector.health(instance).ejected()).as("ejection kept").isTrue();
			assertThat(((SlowStart) third.adjusters().get(0)).rules().duration()).hasMinutes(2);
			assertThat(third.filters()).hasExactlyElementsOfTypes(GrayRouter.class, OutlierEjection.class,
					ClusterAffinity.class, RetryAvoidance.class);

			change(context, Map.of("atlas.services.user-service.outlier.enabled", "false"));
			assertThat(detector.health(instance)).as("detection off: ejected instances back, counts forgotten")
				.isNull();
		});
	}

	@Test
	void theCanarySeriesFollowTheRulesInForce() {
		this.runner.run((context) -> {
			choose(context, "user-service");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(canaryTarget(meters, "v2")).isEqualTo(0.10);

			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "150"));
			assertThat(canaryTarget(meters, "v2")).as("rejected: the target in force stays").isEqualTo(0.10);

			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "30"));
			assertThat(canaryTarget(meters, "v2")).isEqualTo(0.30);

			change(context, Map.of("atlas.services.user-service.gray.weights.v3", "5",
					"atlas.services.user-service.gray.weights.v2", ""));
			assertThat(meters.find(CanaryMeters.TARGET_METER).tag("service", "user-service").gauges())
				.as("v2's rule removed, v3's added")
				.singleElement()
				.satisfies((gauge) -> assertThat(gauge.getId().getTag("lane")).isEqualTo("v3"));
			assertThat(meters.find(CanaryMeters.CANARY_METER)
				.tag("service", "user-service")
				.counters()
				.stream()
				.map((counter) -> counter.getId().getTag("lane"))).containsExactlyInAnyOrder("v3", "baseline");
		});
	}

	@Test
	void aCanaryOfAChangeThatIsNotAppliedLeavesNoSeries() {
		this.runner.withBean("explodingStrategy", StrategyFactory.class, () -> StrategyFactory.of("exploding", (s) -> {
			throw new IllegalStateException("cannot create it");
		})).run((context) -> {
			choose(context, "user-service");
			change(context, Map.of("atlas.services.user-service.loadbalancer.strategy", "exploding",
					"atlas.services.user-service.gray.weights.v3", "5"));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.find(CanaryMeters.CANARY_METER)
				.tag("service", "user-service")
				.counters()
				.stream()
				.map((counter) -> counter.getId().getTag("lane"))).containsExactlyInAnyOrder("v2", "baseline");
			assertThat(meters.find(CanaryMeters.TARGET_METER).tag("lane", "v3").gauge()).isNull();
		});
	}

	private static double canaryTarget(MeterRegistry meters, String lane) {
		return meters.get(CanaryMeters.TARGET_METER).tag("service", "user-service").tag("lane", lane).gauge().value();
	}

	@Test
	void anInvalidChangeIsRejectedForItsServiceWhichKeepsItsRules(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			choose(context, "billing");
			Pipeline before = pipeline(context, "user-service");
			change(context,
					Map.of("atlas.services.user-service.gray.weights.v2", "150",
							"atlas.services.user-service.loadbalancer.strategy", "smooth-round-robin",
							"atlas.services.billing.loadbalancer.strategy", "smooth-round-robin"));
			assertThat(pipeline(context, "user-service")).as("nothing of the change applied").isSameAs(before);
			assertThat(balancer(context, "billing").strategyName()).as("another service's valid change")
				.isEqualTo("smooth-round-robin");
			assertThat(output.getOut())
				.contains("Atlas rejected the configuration change for service 'user-service', whose previous rules "
						+ "stay in force: Invalid atlas.services.user-service.gray.weights: the percentage of tag "
						+ "'v2' must be between 0 and 100, was 150.0");
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "user-service")).isEqualTo(1);
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "billing")).isZero();

			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "30"));
			assertThat(balancer(context, "user-service").strategyName()).as("a later valid change, whole")
				.isEqualTo("smooth-round-robin");
		});
	}

	@Test
	void rejectedValuesNameThePropertyTheValueAndTheAllowedValues(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			change(context, Map.of("atlas.services.user-service.loadbalancer.all-zero-weights", "bogus"));
			assertThat(output.getOut()).contains(
					"Invalid atlas.services.user-service.loadbalancer.all-zero-weights = 'bogus': ", "fail-open",
					"reject");
			change(context, Map.of("atlas.services.user-service.loadbalancer.all-zero-weights", "reject",
					"atlas.services.user-service.loadbalancer.strategy", "fastest"));
			assertThat(output.getOut()).contains("Invalid atlas.services.user-service.loadbalancer.strategy: "
					+ "'fastest' is not a load-balancing strategy; allowed values: weighted-random");
			change(context, Map.of("atlas.services.user-service.loadbalancer.strategy", "ring-hash"));
			assertThat(output.getOut()).contains("ring-hash needs a hash key");
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "user-service")).isEqualTo(3);
			assertThat(balancer(context, "user-service").strategyName()).isEqualTo("weighted-random");
		});
	}

	@Test
	void anInvalidCallerLevelValueRejectsTheChangeForEveryService(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			choose(context, "billing");
			change(context, Map.of("atlas.affinity.min-healthy-ratio", "2", "atlas.loadbalancer.strategy",
					"smooth-round-robin"));
			assertThat(balancer(context, "user-service").strategyName()).isEqualTo("weighted-random");
			assertThat(balancer(context, "billing").strategyName()).isEqualTo("weighted-random");
			assertThat(output.getOut()).contains("atlas.affinity.min-healthy-ratio");
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "billing")).isEqualTo(1);
		});
	}

	@Test
	void aChangeOfAPropertyReadOnlyAtStartupSaysARestartIsNeeded(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			Pipeline before = pipeline(context, "user-service");
			change(context, Map.of("atlas.lifecycle.drain", "30s", "atlas.gray.metadata-key", "lane"));
			assertThat(output.getOut()).contains("Atlas: [atlas.gray.metadata-key, atlas.lifecycle.drain] changed at "
					+ "runtime; read only at startup, so the change applies after a restart");
			assertThat(pipeline(context, "user-service")).isSameAs(before);
		});
	}

	@Test
	void aServiceFirstCalledAfterAChangeStartsWithTheNewRules() {
		// billing is configured, so resolved at startup
		this.runner.withPropertyValues("atlas.services.billing.warmup.duration=30s").run((context) -> {
			choose(context, "user-service");
			change(context, Map.of("atlas.services.billing.loadbalancer.strategy", "smooth-round-robin"));
			choose(context, "billing");
			assertThat(balancer(context, "billing").strategyName()).isEqualTo("smooth-round-robin");
		});
	}

	@Test
	void anInvalidGlobalValueIsNotPutInForceForAServiceCalledAfterIt(CapturedOutput output) {
		this.runner.run((context) -> {
			change(context, Map.of("atlas.loadbalancer.strategy", "fastest"));
			assertThat(output.getOut()).contains("'fastest' is not a load-balancing strategy");
			// billing is neither configured nor called yet: it starts with the global
			// rules in force, not with the rejected value
			assertThat(choose(context, "billing")).isNotNull();
			assertThat(balancer(context, "billing").strategyName()).isEqualTo("weighted-random");
			assertThat(output.getOut())
				.contains("Atlas rules of service 'billing': Invalid atlas.loadbalancer.strategy: 'fastest'");
		});
	}

	@Test
	void theSameRejectionIsReportedOnce(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "150"));
			change(context, Map.of("logging.level.dev.atlas", "INFO"));
			// "for the global rules (atlas.*) and service 'user-service', whose ...": the
			// global value is rejected for the global rules and for the service
			assertThat(output.getOut().split("service 'user-service', whose previous rules stay in force"))
				.as("one ERROR while the same value stays rejected")
				.hasSize(2);
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "user-service")).isEqualTo(1);
		});
	}

	@Test
	void switchesReadOnlyAtStartupKeepTheirStartupValue() {
		this.runner.withPropertyValues("atlas.affinity.cluster=a").run((context) -> {
			choose(context, "user-service");
			change(context, Map.of("atlas.gray.enabled", "false", "atlas.affinity.enabled", "false",
					"atlas.services.user-service.gray.weights.v2", "20"));
			ServiceRouting routing = bean(context, "user-service", ServiceRouting.class);
			assertThat(routing.settings().get(GraySettings.SECTION).grayEnabled()).isTrue();
			assertThat(routing.settings().get(GraySettings.SECTION).gray().canaryPercentages()).containsEntry("v2",
					20.0);
			assertThat(routing.step(ClusterAffinity.class).resolvedRules().cluster()).as("affinity still on")
				.isEqualTo("a");
		});
	}

	@Test
	void aServiceRejectedWhileAffinityChangedKeepsItsAffinityUntilItsChangeApplies() {
		this.runner.withPropertyValues("atlas.affinity.cluster=a").run((context) -> {
			choose(context, "user-service");
			ServiceRouting routing = bean(context, "user-service", ServiceRouting.class);
			assertThat(routing.step(ClusterAffinity.class).resolvedRules().minInstances()).isEqualTo(1);
			change(context,
					Map.of("atlas.affinity.min-instances", "2", "atlas.services.user-service.gray.weights.v2", "150"));
			assertThat(routing.step(ClusterAffinity.class).resolvedRules().minInstances())
				.as("rejected: the affinity its filter holds")
				.isEqualTo(1);
			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "10"));
			assertThat(routing.step(ClusterAffinity.class).resolvedRules().minInstances())
				.as("its change applies, with the new affinity")
				.isEqualTo(2);
			assertThat(((ClusterAffinity) pipeline(context, "user-service").filters().get(2)).rules().minInstances())
				.isEqualTo(2);
		});
	}

	@Test
	void aNewChangeRejectedForTheSameReasonIsReportedAgain(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			change(context, Map.of("atlas.loadbalancer.strategy", "bogus"));
			change(context, Map.of("atlas.services.user-service.gray.weights.v2", "50"));
			// "for the global rules (atlas.*) and service 'user-service', whose ...": the
			// global value is rejected for the global rules and for the service
			assertThat(output.getOut().split("service 'user-service', whose previous rules stay in force"))
				.as("the canary step that did not happen is reported")
				.hasSize(3);
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "user-service")).isEqualTo(2);
		});
	}

	@Test
	void aStrategyThatCannotBeCreatedLeavesEverythingAsItWas(CapturedOutput output) {
		this.runner.withBean("explodingStrategy", StrategyFactory.class, () -> StrategyFactory.of("exploding", (s) -> {
			throw new IllegalStateException("cannot create it");
		})).run((context) -> {
			choose(context, "user-service");
			Pipeline before = pipeline(context, "user-service");
			change(context, Map.of("atlas.services.user-service.loadbalancer.strategy", "exploding",
					"atlas.services.user-service.gray.weights.v2", "40"));
			assertThat(pipeline(context, "user-service")).isSameAs(before);
			assertThat(bean(context, "user-service", ServiceRouting.class).settings()
				.get(StrategyRules.SECTION)
				.strategy()).isEqualTo("weighted-random");
			assertThat(context.getBean(AtlasSettings.class)
				.settingsFor("user-service")
				.get(GraySettings.SECTION)
				.gray()
				.canaryPercentages()).as("settings rolled back").containsEntry("v2", 10.0);
			assertThat(output.getOut()).contains("cannot create it");
			assertThat(context.getBean(MeterRegistry.class)
				.find(CanaryMeters.TARGET_METER)
				.tag("service", "user-service")
				.gauge()
				.value()).as("the target in force stays").isEqualTo(0.10);
		});
	}

	@Test
	void laneRulesChangeAtRuntimeEverywhereAndAnInvalidOneKeepsThoseInForce(CapturedOutput output) {
		this.runner
			.withPropertyValues("atlas.gray.rules[0].tag=v2", "atlas.gray.rules[0].header=X-User-Group",
					"atlas.gray.rules[0].equals=beta")
			.run((context) -> {
				choose(context, "user-service");
				LaneTagger lanes = context.getBean(LaneTagger.class);
				LaneRule beta = new LaneRule("v2", LaneRule.Source.HEADER, "X-User-Group", LaneRule.Match.EQUALS,
						List.of("beta"));
				LaneRule cookie = new LaneRule("v3", LaneRule.Source.COOKIE, "canary", LaneRule.Match.EQUALS,
						List.of("1"));
				assertThat(lanes.rules()).containsExactly(beta);
				// a list comes whole from the highest property source that has it (Spring
				// Boot's binding)
				change(context,
						Map.of("atlas.gray.rules[0].tag", "v2", "atlas.gray.rules[0].header", "X-User-Group",
								"atlas.gray.rules[0].equals", "beta", "atlas.gray.rules[1].tag", "v3",
								"atlas.gray.rules[1].cookie", "canary", "atlas.gray.rules[1].equals", "1"));
				assertThat(lanes.rules()).as("where requests enter").containsExactly(beta, cookie);
				assertThat(pipeline(context, "user-service").filters()).filteredOn(GrayRouter.class::isInstance)
					.singleElement()
					.satisfies((router) -> assertThat(((GrayRouter) router).rules().laneRules()).as("on balanced calls")
						.containsExactly(beta, cookie));
				assertThat(output.getOut()).contains("gray.lane-rules");
				// a third rule whose regex does not compile
				change(context, Map.of("atlas.gray.rules[2].tag", "v4", "atlas.gray.rules[2].query", "lane",
						"atlas.gray.rules[2].regex", "(1"));
				assertThat(output.getOut()).contains("Invalid atlas.gray.rules[2]: the regex '(1' is invalid");
				assertThat(lanes.rules()).as("rejected: the rules in force stay").containsExactly(beta, cookie);
				assertThat(pipeline(context, "user-service").filters()).filteredOn(GrayRouter.class::isInstance)
					.singleElement()
					.satisfies((router) -> assertThat(((GrayRouter) router).rules().laneRules())
						.as("rejected: on balanced calls too")
						.containsExactly(beta, cookie));
			});
	}

	@Test
	void anInvalidPropagationValueRejectsTheChangeAndTheRefreshGoesOn(CapturedOutput output) {
		this.runner.run((context) -> {
			choose(context, "user-service");
			PropagatedHeaders headers = context.getBean(PropagatedHeaders.class);
			List<String> before = headers.names();
			change(context, Map.of("atlas.propagation.reactor-automatic", "not-a-boolean", "atlas.propagation.headers",
					"X-Tenant", "atlas.loadbalancer.strategy", "smooth-round-robin"));
			assertThat(balancer(context, "user-service").strategyName()).as("rejected: the rules in force stay")
				.isEqualTo("weighted-random");
			assertThat(headers.names()).as("rejected: the propagated headers stay").isEqualTo(before);
			assertThat(output.getOut()).contains("Atlas rejected the configuration change")
				.contains("atlas.propagation.reactor-automatic");
			assertThat(counter(context, RuntimeRules.REJECTED_METER, "user-service")).isEqualTo(1);
			change(context, Map.of("atlas.propagation.reactor-automatic", "true"));
			assertThat(headers.names()).as("a later valid change applies").contains("x-tenant");
			assertThat(balancer(context, "user-service").strategyName()).isEqualTo("smooth-round-robin");
		});
	}

	@Test
	void thePropagatedHeadersFollowTheHashKeyHeader() {
		this.runner.run((context) -> {
			PropagatedHeaders headers = context.getBean(PropagatedHeaders.class);
			assertThat(headers.names()).doesNotContain("x-user-id");
			change(context, Map.of("atlas.gray.hash-key-header", "X-User-Id"));
			assertThat(headers.names()).contains("x-service-version", "x-user-id");
		});
	}

	@Test
	void theStageAndTheBalancerShareTheRouting() {
		this.runner.run((context) -> {
			choose(context, "user-service");
			AtlasServiceInstanceListSupplier stage = AtlasServiceInstanceListSupplier
				.find(bean(context, "user-service", ServiceInstanceListSupplier.class));
			assertThat(stage.pipeline()).isSameAs(balancer(context, "user-service").pipeline());
			assertThat(stage.filters().get(0)).isInstanceOf(GrayRouter.class);
		});
	}

}
