package dev.atlas.autoconfigure.client;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClientsProperties;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.blocking.client.BlockingLoadBalancerClient;
import org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * The client adaptations are on with Atlas, off with {@code atlas.enabled=false} or
 * Spring Cloud LoadBalancer disabled, and keep an application's own client.
 */
class AtlasClientAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(AtlasClientAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
					BlockingLoadBalancerClientAutoConfiguration.class, UtilAutoConfiguration.class));

	@Test
	void theBlockingClientReportsWhyNoInstanceWasChosen() {
		this.runner.run((context) -> assertThat(context.getBean(LoadBalancerClient.class))
			.isInstanceOf(AtlasBlockingLoadBalancerClient.class));
	}

	@Test
	void theLookUpsOfEveryRequestAreCachedPerService() {
		this.runner.run((context) -> assertThat(context.getBean(LoadBalancerClientFactory.class))
			.isInstanceOf(AtlasLoadBalancerClientFactory.class));
	}

	@Test
	void anApplicationsOwnFactoryIsKept() {
		LoadBalancerClientFactory own = new LoadBalancerClientFactory(new LoadBalancerClientsProperties());
		this.runner.withBean(LoadBalancerClientFactory.class, () -> own)
			.run((context) -> assertThat(context.getBean(LoadBalancerClientFactory.class)).isSameAs(own));
	}

	@Test
	void offWhenAtlasIsDisabled() {
		this.runner.withPropertyValues("atlas.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(AtlasClientAutoConfiguration.class);
			assertThat(context.getBean(LoadBalancerClient.class)).isExactlyInstanceOf(BlockingLoadBalancerClient.class);
			assertThat(context.getBean(LoadBalancerClientFactory.class))
				.isExactlyInstanceOf(LoadBalancerClientFactory.class);
		});
	}

	@Test
	void offWhenSpringCloudLoadBalancerIsDisabled() {
		this.runner.withPropertyValues("spring.cloud.loadbalancer.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(AtlasClientAutoConfiguration.class));
	}

	@Test
	void anApplicationsOwnClientIsKept() {
		LoadBalancerClient own = mock(LoadBalancerClient.class);
		this.runner.withBean(LoadBalancerClient.class, () -> own)
			.run((context) -> assertThat(context.getBean(LoadBalancerClient.class)).isSameAs(own));
	}

}
