package dev.atlas.autoconfigure.orca;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The load-report auto-configuration on its own: the provider side needs no load
 * balancer, the caller side does (without Atlas's scheduler, there is none and the
 * application still starts), and an invalid window fails startup naming the property.
 */
class AtlasLoadReportAutoConfigurationTest {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasLoadReportAutoConfiguration.class));

	@Test
	void aProviderWithoutLoadBalancerReportsAndHasNoCallerSide() {
		this.runner.withPropertyValues("atlas.load-report.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(LoadReporter.class).hasSingleBean(LoadReportServletFilter.class);
			assertThat(context).doesNotHaveBean(ReportedLoads.class);
		});
	}

	@Test
	void offByDefaultOnTheProviderSide() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(LoadReporter.class)
			.doesNotHaveBean(LoadReportServletFilter.class));
	}

	@Test
	void aWindowUnderOneSecondFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("atlas.load-report.enabled=true", "atlas.load-report.window=500ms")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("atlas.load-report.window: must be a duration of at least 1s, was PT0.5S"));
	}

	@Test
	void offWhenAtlasIsDisabled() {
		this.runner.withPropertyValues("atlas.enabled=false", "atlas.load-report.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(LoadReporter.class));
	}

}
