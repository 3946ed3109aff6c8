package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.regex.Pattern;

import dev.atlas.autoconfigure.gray.GraySettings;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-service settings under a key that does not match the called id exactly, and keys
 * that match nothing, with the real auto-configuration and real load-balancer contexts.
 */
@ExtendWith(OutputCaptureExtension.class)
class ServiceKeysTest {

	private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
					SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class));

	private static String strategyOf(ApplicationContext context, String serviceId) {
		return ((AtlasLoadBalancer) context.getBean(LoadBalancerClientFactory.class).getInstance(serviceId))
			.strategyName();
	}

	private static int occurrences(CapturedOutput output, String text) {
		return output.getOut().split(Pattern.quote(text), -1).length - 1;
	}

	@Test
	void aServiceCalledInUpperCaseGetsTheSettingsWrittenInLowerCase() {
		this.runner.withPropertyValues("atlas.services.user-service.loadbalancer.strategy=smooth-round-robin")
			.run((context) -> {
				assertThat(strategyOf(context, "USER-SERVICE")).isEqualTo("smooth-round-robin");
				assertThat(strategyOf(context, "User-Service")).isEqualTo("smooth-round-robin");
				assertThat(strategyOf(context, "order-service")).isEqualTo("weighted-random");
			});
	}

	@Test
	void anIdWithDotsBindsInBracketsAndMatchesIgnoringCase() {
		this.runner.withPropertyValues("atlas.services[user.service].loadbalancer.strategy=smooth-round-robin")
			.run((context) -> {
				assertThat(context.getBean(AtlasProperties.class).getServices()).containsOnlyKeys("user.service");
				assertThat(strategyOf(context, "user.service")).isEqualTo("smooth-round-robin");
				assertThat(strategyOf(context, "USER.SERVICE")).isEqualTo("smooth-round-robin");
				assertThat(strategyOf(context, "user")).isEqualTo("weighted-random");
			});
	}

	@Test
	void theCanaryWeightsMatchIgnoringCaseToo() {
		this.runner.withPropertyValues("atlas.services.user-service.gray.weights.v2=10")
			.run((context) -> assertThat(context.getBean(AtlasSettings.class)
				.settingsFor("USER-SERVICE")
				.get(GraySettings.SECTION)
				.gray()
				.canaryPercentages()).isEqualTo(Map.of("v2", 10.0)));
	}

	@Test
	void theSpellingOfTheIdItselfWinsOverAKeyThatOnlyMatches() {
		this.runner
			.withPropertyValues("atlas.services[Billing.Api].loadbalancer.strategy=smooth-round-robin",
					"atlas.services[billing.api].loadbalancer.strategy=weighted-random")
			.run((context) -> {
				assertThat(strategyOf(context, "billing.api")).isEqualTo("weighted-random");
				assertThat(strategyOf(context, "Billing.Api")).isEqualTo("smooth-round-robin");
			});
	}

	@Test
	void anUnbracketedIdWithDotsIsReportedAtStartup(CapturedOutput output) {
		this.runner.withPropertyValues("atlas.services.user.service.loadbalancer.strategy=smooth-round-robin")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(occurrences(output, "atlas.services.user.service.loadbalancer.strategy sets nothing: "
						+ "'service' is not a section (loadbalancer, gray, warmup) of a service. A service id with "
						+ "dots is written in brackets, atlas.services[user.service].loadbalancer.strategy."))
					.isEqualTo(1);
			});
	}

	@Test
	void aKeyThatMatchesNoCalledServiceIsReportedOnceAfterTheGracePeriod(CapturedOutput output) {
		ManualScheduler scheduler = AuditWithManualTime.SCHEDULER;
		scheduler.tasks.clear();
		this.runner.withUserConfiguration(AuditWithManualTime.class)
			.withPropertyValues("atlas.services.user-service.loadbalancer.strategy=smooth-round-robin",
					"atlas.services.user-servce.warmup.enabled=false", "atlas.services.billing.gray.weights.v2=5")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(scheduler.tasks).as("nothing before the first call").isEmpty();
				strategyOf(context, "USER-SERVICE");
				strategyOf(context, "order-service");
				assertThat(scheduler.tasks).hasSize(1);
				assertThat(scheduler.tasks.get(0).at()).isEqualTo(START.plus(Duration.ofMinutes(2)));
				assertThat(output).doesNotContain("matches no service");

				scheduler.tasks.get(0).task().run();
				String unused = " matches no service this application called in the 120 s after its first "
						+ "load-balanced call (called: [USER-SERVICE, order-service]): these settings are not used.";
				assertThat(occurrences(output, "atlas.services.user-servce.*" + unused)).isEqualTo(1);
				assertThat(occurrences(output, "atlas.services.billing.*" + unused)).isEqualTo(1);
				assertThat(output).doesNotContain("atlas.services.user-service.* matches");
				assertThat(occurrences(output, "matches no service")).isEqualTo(2);

				// Once: neither a second check nor a later call logs again.
				strategyOf(context, "billing");
				scheduler.tasks.get(0).task().run();
				assertThat(scheduler.tasks).hasSize(1);
				assertThat(occurrences(output, "matches no service")).isEqualTo(2);
			});
	}

	@Test
	void withoutConfiguredKeysNothingIsScheduled() {
		ManualScheduler scheduler = AuditWithManualTime.SCHEDULER;
		scheduler.tasks.clear();
		this.runner.withUserConfiguration(AuditWithManualTime.class).run((context) -> {
			strategyOf(context, "user-service");
			assertThat(scheduler.tasks).isEmpty();
		});
	}

	/** The audit with a fixed clock and a scheduler the test runs by hand. */
	@Configuration(proxyBeanMethods = false)
	static class AuditWithManualTime {

		static final ManualScheduler SCHEDULER = new ManualScheduler();

		@Bean
		ServiceKeyAudit serviceKeyAudit(AtlasSettings settings, Environment environment) {
			return new ServiceKeyAudit(settings, environment, SCHEDULER, Clock.fixed(START, ZoneOffset.UTC),
					Duration.ofMinutes(2));
		}

	}

	/** Keeps what is scheduled; runs nothing by itself. */
	static final class ManualScheduler implements TaskScheduler {

		final List<Scheduled> tasks = new ArrayList<>();

		@Override
		public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
			this.tasks.add(new Scheduled(task, startTime));
			return null;
		}

		@Override
		public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
			throw new UnsupportedOperationException();
		}

		@Override
		public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
			throw new UnsupportedOperationException();
		}

		@Override
		public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
			throw new UnsupportedOperationException();
		}

		@Override
		public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
			throw new UnsupportedOperationException();
		}

		@Override
		public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
			throw new UnsupportedOperationException();
		}

		record Scheduled(Runnable task, Instant at) {
		}

	}

}
