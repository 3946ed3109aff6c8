package dev.atlas.autoconfigure.registry;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Event-driven refresh is on with Atlas, off with {@code atlas.enabled=false},
 * {@code atlas.registry.refresh-on-events=false} or Spring Cloud LoadBalancer disabled;
 * {@code atlas.registry.*} is bound in every case Atlas is on.
 */
class AtlasRegistryAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasRegistryAutoConfiguration.class));

	@Test
	void refreshesOnRegistryEvents() {
		this.runner.withPropertyValues("atlas.registry.stale-limit=5s").run((context) -> {
			assertThat(context).hasSingleBean(RegistryEventRefresher.class);
			assertThat(context.getBean(RegistryProperties.class).getStaleLimit()).hasSeconds(5);
		});
	}

	@Test
	void noRefresherWhenRefreshOnEventsIsOff() {
		this.runner.withPropertyValues("atlas.registry.refresh-on-events=false").run((context) -> {
			assertThat(context).doesNotHaveBean(RegistryEventRefresher.class);
			assertThat(context).hasSingleBean(RegistryProperties.class);
		});
	}

	@Test
	void offWhenAtlasIsDisabled() {
		this.runner.withPropertyValues("atlas.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(AtlasRegistryAutoConfiguration.class)
				.doesNotHaveBean(RegistryEventRefresher.class));
	}

	@Test
	void offWhenSpringCloudLoadBalancerIsDisabled() {
		this.runner.withPropertyValues("spring.cloud.loadbalancer.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(AtlasRegistryAutoConfiguration.class));
	}

}
