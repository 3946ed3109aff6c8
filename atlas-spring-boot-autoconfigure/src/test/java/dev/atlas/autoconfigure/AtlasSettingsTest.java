package dev.atlas.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.affinity.AffinitySection;
import dev.atlas.autoconfigure.affinity.CallerCluster;
import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.loadbalancer.LoadBalancerProperties;
import dev.atlas.autoconfigure.loadbalancer.StrategyRules;
import dev.atlas.autoconfigure.outlier.OutlierSection;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.autoconfigure.warmup.WarmupProperties;
import dev.atlas.autoconfigure.warmup.WarmupSection;
import dev.atlas.loadbalancer.choice.HashRules;
import dev.atlas.loadbalancer.choice.LeastRequestRules;
import dev.atlas.loadbalancer.choice.PeakEwmaRules;
import dev.atlas.loadbalancer.outlier.ProbeRules;
import dev.atlas.loadbalancer.routing.GrayFallback;
import dev.atlas.loadbalancer.routing.GrayRules;
import dev.atlas.loadbalancer.routing.LaneRule;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.weighting.WarmupRules;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Per-service settings: {@code atlas.services.<serviceId>.<section>} overlaid on
 * {@code atlas.<section>}, as the auto-configuration resolves them.
 */
@ExtendWith(OutputCaptureExtension.class)
class AtlasSettingsTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class));

	private static ServiceSettings settings(AssertableApplicationContext context, String serviceId) {
		assertThat(context).hasNotFailed();
		return context.getBean(AtlasSettings.class).settingsFor(serviceId);
	}

	private static String messages(Throwable failure) {
		StringBuilder all = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			all.append(t.getMessage()).append('\n');
		}
		return all.toString();
	}

	@Test
	void withoutPropertiesEveryServiceGetsTheDefaults() {
		this.runner.run((context) -> {
			ServiceSettings settings = settings(context, "user-service");
			assertThat(settings.get(StrategyRules.SECTION).strategy()).isEqualTo("weighted-random");
			assertThat(settings.get(StrategyRules.SECTION).allZeroWeights()).isEqualTo(AllZeroWeightsPolicy.FAIL_OPEN);
			assertThat(settings.get(GraySettings.SECTION).grayEnabled()).isTrue();
			assertThat(settings.get(GraySettings.SECTION).gray()).isEqualTo(GrayRules.DEFAULTS);
			assertThat(settings.get(WarmupSection.SECTION)).isEqualTo(WarmupRules.DEFAULTS);
			assertThat(settings(context, "")).isEqualTo(settings);
		});
	}

	@Test
	void aServiceGetsTheGlobalValuesExceptThoseItSetsItself() {
		this.runner
			.withPropertyValues("atlas.loadbalancer.strategy=smooth-round-robin",
					"atlas.loadbalancer.all-zero-weights=reject", "atlas.gray.fallback=all",
					"atlas.gray.baseline-tags=v1", "atlas.gray.hash-key-header=X-User-Id", "atlas.warmup.duration=30s",
					"atlas.services.user-service.loadbalancer.strategy=weighted-random",
					"atlas.services.user-service.gray.baseline-tags=v0,stable",
					"atlas.services.user-service.gray.isolate-baseline=false",
					"atlas.services.user-service.warmup.aggression=2")
			.run((context) -> {
				ServiceSettings user = settings(context, "user-service");
				assertThat(user.get(StrategyRules.SECTION).strategy()).isEqualTo("weighted-random");
				assertThat(user.get(StrategyRules.SECTION).allZeroWeights()).isEqualTo(AllZeroWeightsPolicy.REJECT);
				assertThat(user.get(GraySettings.SECTION).gray().fallback()).isEqualTo(GrayFallback.ALL);
				assertThat(user.get(GraySettings.SECTION).gray().baselineTags()).as("a list is replaced, not merged")
					.containsExactlyInAnyOrder("v0", "stable");
				assertThat(user.get(GraySettings.SECTION).gray().isolateBaseline()).isFalse();
				assertThat(user.get(GraySettings.SECTION).gray().hashKeyHeader()).isEqualTo("X-User-Id");
				assertThat(user.get(WarmupSection.SECTION)).isEqualTo(new WarmupRules(Duration.ofSeconds(30), 2.0, 10));

				ServiceSettings order = settings(context, "order-service");
				assertThat(order.get(StrategyRules.SECTION).strategy()).isEqualTo("smooth-round-robin");
				assertThat(order.get(StrategyRules.SECTION).allZeroWeights()).isEqualTo(AllZeroWeightsPolicy.REJECT);
				assertThat(order.get(GraySettings.SECTION).gray().baselineTags()).containsExactly("v1");
				assertThat(order.get(GraySettings.SECTION).gray().isolateBaseline()).isTrue();
				assertThat(order.get(WarmupSection.SECTION))
					.isEqualTo(new WarmupRules(Duration.ofSeconds(30), 1.0, 10));
				assertThat(settings(context, "")).isEqualTo(order);
			});
	}

	@Test
	void aServiceIsResolvedOnce() {
		this.runner.withPropertyValues("atlas.services.user-service.loadbalancer.all-zero-weights=reject")
			.run((context) -> assertThat(settings(context, "user-service"))
				.isSameAs(settings(context, "user-service")));
	}

	@Test
	void callerLevelGraySettingsApplyToEveryService() {
		this.runner
			.withPropertyValues("atlas.gray.header=X-Lane", "atlas.gray.own-tag=V2", "atlas.gray.enabled=false",
					"atlas.services.user-service.gray.header=X-Ignored")
			.run((context) -> {
				ServiceSettings user = settings(context, "user-service");
				assertThat(user.get(GraySettings.SECTION).gray().header()).isEqualTo("X-Lane");
				assertThat(user.get(GraySettings.SECTION).gray().ownTag()).isEqualTo("v2");
				assertThat(user.get(GraySettings.SECTION).grayEnabled()).isFalse();
			});
	}

	@Test
	void affinityIsTheCallersWhateverTheService() {
		this.runner.withPropertyValues("atlas.affinity.min-instances=2").run((context) -> {
			CallerCluster settings = context.getBean(CallerCluster.class);
			assertThat(settings.affinity("Zone-A").cluster()).isEqualTo("zone-a");
			assertThat(settings.affinity("zone-a").minInstances()).isEqualTo(2);
			assertThat(settings.affinity(null).cluster()).isNull();
		});
		this.runner.withPropertyValues("atlas.affinity.cluster=b", "atlas.affinity.enabled=false")
			.run((context) -> assertThat(context.getBean(CallerCluster.class).affinity("a").cluster()).isNull());
	}

	@Test
	void strategyNamesAreNormalizedNotChecked() {
		assertThat(LoadBalancerProperties.normalizeStrategy(" SMOOTH_ROUND_ROBIN ")).isEqualTo("smooth-round-robin");
		assertThat(LoadBalancerProperties.normalizeStrategy("Least-Request")).isEqualTo("least-request");
		assertThat(LoadBalancerProperties.normalizeStrategy(" ")).isEqualTo("weighted-random");
		assertThat(LoadBalancerProperties.normalizeStrategy(null)).isEqualTo("weighted-random");
		AtlasSettings settings = settings(Map.of("atlas.loadbalancer.strategy", "Peak_EWMA",
				"atlas.services.user-service.loadbalancer.strategy", " My-Own "));
		assertThat(settings.settingsFor("order-service").get(StrategyRules.SECTION).strategy()).isEqualTo("peak-ewma");
		assertThat(settings.settingsFor("user-service").get(StrategyRules.SECTION).strategy()).isEqualTo("my-own");
	}

	@Test
	void serviceIdsAreMatchedAsSpringBootBindsMapKeys() {
		AtlasSettings settings = settings(Map.of("atlas.services.user-service.loadbalancer.strategy", "a",
				"atlas.services.BILLING.loadbalancer.strategy", "b",
				"atlas.services[Billing.API].loadbalancer.strategy", "c",
				"atlas.services[brackets-only].loadbalancer.strategy", "d"));
		assertThat(settings.configuredServiceIds()).containsExactlyInAnyOrder("user-service", "BILLING", "Billing.API",
				"brackets-only");
		assertThat(settings.settingsFor("user-service").get(StrategyRules.SECTION).strategy()).isEqualTo("a");
		assertThat(settings.settingsFor("BILLING").get(StrategyRules.SECTION).strategy()).isEqualTo("b");
		assertThat(settings.settingsFor("billing").get(StrategyRules.SECTION).strategy())
			.as("relaxed, as Spring Boot compares names")
			.isEqualTo("b");
		assertThat(settings.settingsFor("Billing.API").get(StrategyRules.SECTION).strategy()).isEqualTo("c");
		assertThat(settings.settingsFor("brackets-only").get(StrategyRules.SECTION).strategy()).isEqualTo("d");
		assertThat(settings.settingsFor("other").get(StrategyRules.SECTION).strategy()).isEqualTo("weighted-random");
	}

	@Test
	void canaryWeightsPerService() {
		this.runner.withPropertyValues("atlas.services.user-service.gray.weights.v2=10").run((context) -> {
			assertThat(settings(context, "user-service").get(GraySettings.SECTION).gray().canaryPercentages())
				.containsExactly(Map.entry("v2", 10.0));
			assertThat(settings(context, "order-service").get(GraySettings.SECTION).gray().canaryPercentages())
				.isEmpty();
		});
	}

	@Test
	void canaryWeightsAreReadPerServiceOnly(CapturedOutput output) {
		this.runner
			.withPropertyValues("atlas.services.user-service.gray.weights.v2=10", "atlas.gray.weights.v2=30",
					"atlas.gray.weights.order-service.v2=30")
			.run((context) -> {
				assertThat(settings(context, "user-service").get(GraySettings.SECTION).gray().canaryPercentages())
					.containsExactly(Map.entry("v2", 10.0));
				settings(context, "user-service");
				assertThat(settings(context, "order-service").get(GraySettings.SECTION).gray().canaryPercentages())
					.as("atlas.gray.weights is never read as the weights of every service, nor of one")
					.isEmpty();
				assertThat(output).doesNotContain("deprecated")
					.doesNotContain("write atlas.services.user-service.gray.weights.<tag> instead");
			});
	}

	@Test
	void theCanaryWeightsOfAServiceAreOnlyThoseUnderItsOwnKey(CapturedOutput output) {
		this.runner
			.withPropertyValues("atlas.gray.weights.user-service.v2=50", "atlas.gray.weights.user-service.v3=150",
					"atlas.services.user-service.gray.weights.v2=20")
			.run((context) -> {
				assertThat(settings(context, "user-service").get(GraySettings.SECTION).gray().canaryPercentages())
					.containsExactly(Map.entry("v2", 20.0));
				assertThat(output).doesNotContain("deprecated").doesNotContain("ignored");
			});
	}

	@Test
	void invalidCanaryWeightsFailStartupNamingThePropertyUsed() {
		this.runner.withPropertyValues("atlas.services.user-service.gray.weights.v2=120").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure()))
				.contains("Invalid atlas.services.user-service.gray.weights: the percentage of tag 'v2' must be "
						+ "between 0 and 100, was 120.0");
		});
		this.runner.withPropertyValues("atlas.services.USER-SERVICE.gray.weights.v2=120").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure()))
				.contains("Invalid atlas.services.USER-SERVICE.gray.weights: the percentage of tag 'v2'")
				.doesNotContain("atlas.gray.weights");
		});
		this.runner
			.withPropertyValues("atlas.services.user-service.gray.weights.v2=60",
					"atlas.services.user-service.gray.weights.v3=60")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(
						"Invalid atlas.services.user-service.gray.weights: the canary percentages add up to 120.0");
			});
	}

	@Test
	void aProbeSslBundleThatDoesNotExistFailsStartupNamingThePropertyAndTheBundles() {
		this.runner.withPropertyValues("atlas.outlier.probe.ssl-bundle=missing").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure()))
				.contains("Invalid atlas.outlier.probe.ssl-bundle: no SSL bundle named 'missing'");
		});
		this.runner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
			.withPropertyValues("spring.ssl.bundle.pem.probes.truststore.certificate=classpath:tls/probe-ca.pem",
					"atlas.services.user-service.outlier.probe.ssl-bundle=probs")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(
						"Invalid atlas.services.user-service.outlier.probe.ssl-bundle: no SSL bundle named 'probs'"
								+ " (configured: [probes])");
			});
		this.runner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
			.withPropertyValues("spring.ssl.bundle.pem.probes.truststore.certificate=classpath:tls/probe-ca.pem",
					"atlas.outlier.probe.ssl-bundle=probes", "atlas.outlier.probe.server-name=user-service.internal")
			.run((context) -> assertThat(settings(context, "user-service").get(OutlierSection.SECTION).probe())
				.extracting(ProbeRules::sslBundle, ProbeRules::serverName)
				.containsExactly("probes", "user-service.internal"));
		this.runner.withPropertyValues("atlas.outlier.probe.server-name=10.0.0.1")
			.run((context) -> assertThat(messages(context.getStartupFailure()))
				.contains("Invalid atlas.outlier.probe.server-name must be a DNS host name"));
	}

	@Test
	void invalidPerServiceValuesFailStartupNamingThePropertyAndTheAllowedValues() {
		this.runner.withPropertyValues("atlas.services.user-service.gray.fallback=foo").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("atlas.services.user-service.gray.fallback")
				.contains("'foo' is not a gray fallback; allowed values: baseline, all, none");
		});
		this.runner.withPropertyValues("atlas.services.user-service.warmup.aggression=0").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure()))
				.contains("Invalid atlas.services.user-service.warmup.aggression must be a number > 0, was 0.0");
		});
		this.runner
			.withPropertyValues("atlas.services.user-service.outlier.probe.type=http",
					"atlas.services.user-service.outlier.probe.path=health")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(
						"Invalid atlas.services.user-service.outlier.probe.path must be a path starting with '/' (URI syntax, e.g. /actuator/health), was 'health'");
			});
		this.runner.withPropertyValues("atlas.services.user-service.loadbalancer.hash.load-factor=0.9")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(
						"Invalid atlas.services.user-service.loadbalancer.hash.load-factor must be a finite number > 1, was 0.9");
			});
		this.runner.withPropertyValues("atlas.services.user-service.outlier.probe.type=ping").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("atlas.services.user-service.outlier.probe.type")
				.contains("'ping' is not a probe type; allowed values: tcp, http, none");
		});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					atlas.gray.header=                      | Invalid atlas.gray.header: must be a header name, e.g. X-Service-Version
					atlas.gray.metadata-key=                | Invalid atlas.gray.metadata-key: must be a metadata key, e.g. version
					atlas.affinity.min-healthy-ratio=2      | Invalid atlas.affinity.min-healthy-ratio must be between 0 and 1, was 2.0
					atlas.affinity.min-instances=-1         | Invalid atlas.affinity.min-instances must be >= 0, was -1
					atlas.affinity.min-cluster-size=-1      | Invalid atlas.affinity.min-cluster-size must be >= 0, was -1
					atlas.affinity.callers-refresh-interval=0s | Invalid atlas.affinity.callers-refresh-interval must be positive, was PT0S
					atlas.affinity.mode=nearest             | 'nearest' is not an affinity mode; allowed values: proportional, threshold, strict
					atlas.warmup.min-weight-percent=101     | Invalid atlas.warmup.min-weight-percent must be between 0 and 100, was 101.0
					atlas.registry.stale-limit=-1s          | Invalid atlas.registry.stale-limit: must be a duration >= 0, was PT-1S
					atlas.lifecycle.register-delay=-1s      | Invalid atlas.lifecycle.register-delay: must be a duration >= 0, was PT-1S
					atlas.lifecycle.drain=-1s               | Invalid atlas.lifecycle.drain: must be a duration >= 0, was PT-1S
					atlas.lifecycle.deregister-timeout=-1s  | Invalid atlas.lifecycle.deregister-timeout: must be a duration >= 0, was PT-1S
					atlas.loadbalancer.all-zero-weights=x   | 'x' is not an all-zero-weights policy; allowed values: fail-open, reject
					atlas.outlier.consecutive5xx=-1        | Invalid atlas.outlier.consecutive5xx must be >= 0 (0 turns it off), was -1
					atlas.outlier.consecutive-gateway-failure=-2 | Invalid atlas.outlier.consecutive-gateway-failure must be >= 0 (0 turns it off), was -2
					atlas.outlier.base-ejection-time=0s     | Invalid atlas.outlier.base-ejection-time must be at least 1ms, was PT0S
					atlas.outlier.max-ejection-time=10s     | Invalid atlas.outlier.max-ejection-time must be >= base-ejection-time (PT30S), was PT10S
					atlas.outlier.max-ejection-percent=120  | Invalid atlas.outlier.max-ejection-percent must be between 0 and 100, was 120.0
					atlas.outlier.panic-threshold-percent=-1 | Invalid atlas.outlier.panic-threshold-percent must be between 0 and 100, was -1.0
					atlas.outlier.probe.interval=0ms        | Invalid atlas.outlier.probe.interval must be at least 1ms, was PT0S
					atlas.outlier.probe.timeout=0ms         | Invalid atlas.outlier.probe.timeout must be at least 1ms, was PT0S
					atlas.outlier.probe.type=icmp           | 'icmp' is not a probe type; allowed values: tcp, http, none
					atlas.loadbalancer.least-request.choice-count=1 | Invalid atlas.loadbalancer.least-request.choice-count must be an integer >= 2, was 1
					atlas.loadbalancer.least-request.active-request-bias=-0.5 | Invalid atlas.loadbalancer.least-request.active-request-bias must be a finite number >= 0, was -0.5
					atlas.loadbalancer.peak-ewma.choice-count=0 | Invalid atlas.loadbalancer.peak-ewma.choice-count must be an integer >= 2, was 0
					atlas.loadbalancer.peak-ewma.decay-time=0s | Invalid atlas.loadbalancer.peak-ewma.decay-time must be at least 1ms, was PT0S
					atlas.loadbalancer.hash.virtual-nodes=0 | Invalid atlas.loadbalancer.hash.virtual-nodes must be an integer >= 1, was 0
					atlas.loadbalancer.weighted-round-robin.blackout-period=-1s | Invalid atlas.loadbalancer.weighted-round-robin.blackout-period must be a duration >= 0, was PT-1S
					atlas.loadbalancer.weighted-round-robin.weight-expiration-period=0s | Invalid atlas.loadbalancer.weighted-round-robin.weight-expiration-period must be a duration > 0, was PT0S
					atlas.loadbalancer.weighted-round-robin.weight-update-period=50ms | Invalid atlas.loadbalancer.weighted-round-robin.weight-update-period must be a duration >= 100ms, was PT0.05S
					atlas.loadbalancer.weighted-round-robin.error-utilization-penalty=-1 | Invalid atlas.loadbalancer.weighted-round-robin.error-utilization-penalty must be a finite number >= 0, was -1.0
					atlas.loadbalancer.hash.load-factor=1   | Invalid atlas.loadbalancer.hash.load-factor must be a finite number > 1, was 1.0
					atlas.loadbalancer.max-in-flight-per-instance=-1 | Invalid atlas.loadbalancer.max-in-flight-per-instance: -1; allowed: 0 (off) or a positive number of requests
					""")
	void eachSectionValidatesItsOwnValues(String property, String message) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains(message)
				.contains(property.substring(0, property.indexOf('=')));
		});
	}

	@Test
	void laneRulesApplyToEveryServiceInOrder() {
		AtlasSettings settings = settings(Map.of("atlas.gray.rules[0].tag", "v2", "atlas.gray.rules[0].header",
				"X-User-Group", "atlas.gray.rules[0].equals", "beta", "atlas.gray.rules[1].tag", "V3",
				"atlas.gray.rules[1].cookie", "lane", "atlas.gray.rules[1].in", "3,three", "atlas.gray.rules[2].tag",
				"v2", "atlas.gray.rules[2].query", "canary", "atlas.gray.rules[2].regex", "1|true"));
		List<LaneRule> expected = List.of(
				new LaneRule("v2", LaneRule.Source.HEADER, "X-User-Group", LaneRule.Match.EQUALS, List.of("beta")),
				new LaneRule("v3", LaneRule.Source.COOKIE, "lane", LaneRule.Match.IN, List.of("3", "three")),
				new LaneRule("v2", LaneRule.Source.QUERY, "canary", LaneRule.Match.REGEX, List.of("1|true")));
		assertThat(settings.settingsFor("user-service").get(GraySettings.SECTION).gray().laneRules())
			.isEqualTo(expected);
		assertThat(settings.settingsFor("order-service").get(GraySettings.SECTION).gray().laneRules())
			.isEqualTo(expected);
		assertThat(settings(Map.of()).settingsFor("user-service").get(GraySettings.SECTION).gray().laneRules())
			.isEmpty();
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					atlas.gray.rules[0].header=X-User-Group,atlas.gray.rules[0].contains=beta,atlas.gray.rules[0].tag=v2 | Invalid atlas.gray.rules[0].contains: unknown key of a lane rule (a rule has tag, header | cookie | query, equals | in | regex)
					atlas.gray.rules[0].header=X-User-Group,atlas.gray.rules[0].equals=beta,atlas.gray.rules[0].tag=     | Invalid atlas.gray.rules[0]: the tag must not be blank
					atlas.gray.rules[0].header=X-User-Group,atlas.gray.rules[0].equals=beta                              | Invalid atlas.gray.rules[0]: a rule needs a tag (e.g. tag: v2)
					atlas.gray.rules[0].header=X-A,atlas.gray.rules[0].regex=(beta,atlas.gray.rules[0].tag=v2            | Invalid atlas.gray.rules[0]: the regex '(beta' is invalid: Unclosed group
					atlas.gray.rules[0].equals=beta,atlas.gray.rules[0].tag=v2                                           | Invalid atlas.gray.rules[0]: a rule needs what it reads (exactly one of header, cookie, query)
					atlas.gray.rules[0].header=X-A,atlas.gray.rules[0].cookie=a,atlas.gray.rules[0].equals=1,atlas.gray.rules[0].tag=v2 | Invalid atlas.gray.rules[0]: a rule reads one attribute, not [header, cookie] (exactly one of header, cookie, query)
					atlas.gray.rules[0].header=X-A,atlas.gray.rules[0].tag=v2                                            | Invalid atlas.gray.rules[0]: a rule needs a matcher (exactly one of equals, in, regex)
					atlas.gray.rules[0].header=X-A,atlas.gray.rules[0].equals=1,atlas.gray.rules[0].regex=1,atlas.gray.rules[0].tag=v2 | Invalid atlas.gray.rules[0]: a rule has one matcher, not [equals, regex] (exactly one of equals, in, regex)
					atlas.gray.rules[0].header=X-A,atlas.gray.rules[0].equals=1,atlas.gray.rules[0].tag=v2,atlas.gray.rules[1].query=q,atlas.gray.rules[1].in=,atlas.gray.rules[1].tag=v2 | Invalid atlas.gray.rules[1]: 'in' needs one or more values, none blank
					""")
	void invalidLaneRulesFailStartupNamingTheRule(String properties, String message) {
		this.runner.withPropertyValues(properties.split(",")).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains(message);
		});
	}

	@Test
	void aWarmupRulesErrorOfTheGlobalValuesNamesTheGlobalProperty() {
		WarmupProperties warmup = new WarmupProperties();
		warmup.setAggression(-1);
		assertThatIllegalArgumentException().isThrownBy(warmup::afterPropertiesSet)
			.withMessage("Invalid atlas.warmup.aggression must be a number > 0, was -1.0");
	}

	/** Settings read from properties alone, without the auto-configuration. */
	private static AtlasSettings settings(Map<String, String> properties) {
		return new AtlasSettings(new Binder(new MapConfigurationPropertySource(properties)),
				List.of(StrategyRules.SECTION, GraySettings.SECTION, WarmupSection.SECTION, OutlierSection.SECTION),
				List.of(GraySettings.CALLER, AffinitySection.CALLER));
	}

	@Test
	void strategyRulesAreOverlaidPerService() {
		AtlasSettings settings = settings(
				Map.of("atlas.loadbalancer.hash.header", "X-User-Id", "atlas.loadbalancer.least-request.choice-count",
						"3", "atlas.services.user-service.loadbalancer.hash.cookie", "session",
						"atlas.services.user-service.loadbalancer.peak-ewma.decay-time", "5s"));
		ServiceSettings users = settings.settingsFor("user-service");
		assertThat(users.get(StrategyRules.SECTION).hash())
			.isEqualTo(new HashRules("x-user-id", "session", 160, false, 1.25));
		assertThat(users.get(StrategyRules.SECTION).peakEwma()).isEqualTo(new PeakEwmaRules(2, Duration.ofSeconds(5)));
		assertThat(users.get(StrategyRules.SECTION).leastRequest()).isEqualTo(new LeastRequestRules(3, 1.0));
		assertThat(settings.settingsFor("order-service").get(StrategyRules.SECTION).hash().cookie()).isNull();
		assertThat(settings.settingsFor("order-service").get(StrategyRules.SECTION).peakEwma())
			.isEqualTo(PeakEwmaRules.DEFAULTS);
	}

	@Test
	void everyServiceSectionIsOverlaid() {
		AtlasSettings settings = settings(
				Map.of("atlas.warmup.enabled", "false", "atlas.services.user-service.warmup.enabled", "true"));
		assertThat(settings.settingsFor("user-service").get(WarmupSection.SECTION)).isEqualTo(WarmupRules.DEFAULTS);
		assertThat(settings.settingsFor("order-service").get(WarmupSection.SECTION)).isEqualTo(WarmupRules.OFF);
		assertThat(settings.configuredServiceIds()).isEqualTo(Set.of("user-service"));
	}

}
