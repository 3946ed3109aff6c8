package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.affinity.CallerCluster;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerZoneConfig;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The precedence of the caller's cluster: {@code atlas.affinity.cluster} > Nacos cluster
 * name > the zone of Spring Cloud's {@link LoadBalancerZoneConfig}, read once.
 */
class CallerClusterTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
					SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class));

	@Test
	void atlasPropertyThenNacosClusterThenTheZoneBean() {
		this.runner
			.withPropertyValues("atlas.affinity.cluster=Atlas", "spring.cloud.nacos.discovery.cluster-name=nacos",
					"spring.cloud.loadbalancer.zone=zone")
			.run((context) -> assertThat(context.getBean(CallerCluster.class).rules().cluster()).isEqualTo("atlas"));
		this.runner
			.withPropertyValues("spring.cloud.nacos.discovery.cluster-name=nacos",
					"spring.cloud.loadbalancer.zone=zone")
			.run((context) -> assertThat(context.getBean(CallerCluster.class).rules().cluster()).isEqualTo("nacos"));
		this.runner.withPropertyValues("spring.cloud.loadbalancer.zone=zone")
			.run((context) -> assertThat(context.getBean(CallerCluster.class).rules().cluster()).isEqualTo("zone"));
		this.runner.run((context) -> assertThat(context.getBean(CallerCluster.class).rules().cluster()).isNull());
	}

	@Test
	void theZoneBeanIsReadAtTheFirstCallAndKept() {
		this.runner.run((context) -> {
			CallerCluster caller = context.getBean(CallerCluster.class);
			LoadBalancerZoneConfig zone = context.getBean(LoadBalancerZoneConfig.class);
			assertThat(caller.describe()).isEqualTo(
					"off unless a registry integration sets the zone of LoadBalancerZoneConfig before the first call");
			zone.setZone("Zone1");
			assertThat(caller.describe())
				.isEqualTo("cluster 'zone1' (zone of LoadBalancerZoneConfig, read at the first call)");
			assertThat(caller.rules().cluster()).isEqualTo("zone1");
			zone.setZone("zone2");
			assertThat(caller.rules().cluster()).as("read once").isEqualTo("zone1");
			assertThat(caller.describe()).isEqualTo("cluster 'zone1'");
		});
	}

	@Test
	void disabledAffinityHasNoCluster() {
		this.runner.withPropertyValues("atlas.affinity.enabled=false", "spring.cloud.loadbalancer.zone=zone")
			.run((context) -> {
				assertThat(context.getBean(CallerCluster.class).rules().cluster()).isNull();
				assertThat(context.getBean(CallerCluster.class).describe()).isEqualTo("off (no cluster)");
			});
	}

	@Test
	void twoZoneBeansNeverFailARequestAndTheZonePropertyApplies() {
		this.runner.withUserConfiguration(TwoZoneConfigs.class)
			.withPropertyValues("spring.cloud.loadbalancer.zone=zone")
			.run((context) -> {
				assertThat(context.getBeansOfType(LoadBalancerZoneConfig.class)).hasSize(2);
				CallerCluster caller = context.getBean(CallerCluster.class);
				assertThat(caller.describe()).isEqualTo("cluster 'zone'");
				assertThat(caller.rules().cluster()).isEqualTo("zone");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class TwoZoneConfigs {

		@Bean
		LoadBalancerZoneConfig firstZoneConfig() {
			return new LoadBalancerZoneConfig("one");
		}

		@Bean
		LoadBalancerZoneConfig secondZoneConfig() {
			return new LoadBalancerZoneConfig("other");
		}

	}

}
