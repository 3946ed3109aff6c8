package dev.atlas.autoconfigure.routing;

import java.util.HashMap;
import java.util.Map;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.config.LoadBalancerZoneConfig;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;
import org.springframework.web.client.RestClient;

import static dev.atlas.autoconfigure.ZooKeeperApps.port;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The caller's zone is set by a registry integration on Spring Cloud's
 * {@link LoadBalancerZoneConfig} bean, not by any property Atlas reads. Real applications
 * on a real (in-process) ZooKeeper; the caller sets the zone exactly the way Spring Cloud
 * Netflix's {@code EurekaLoadBalancerClientConfiguration} does it from
 * {@code eureka.instance.metadata-map.zone}: from a default load-balancer client
 * configuration, when each load-balancer context is created, if the zone is still empty.
 */
@ExtendWith(OutputCaptureExtension.class)
class CallerZoneFromRegistryIT {

	private ZooKeeperApps apps;

	@BeforeEach
	void registry() throws Exception {
		this.apps = new ZooKeeperApps();
	}

	@AfterEach
	void stop() throws Exception {
		this.apps.close();
	}

	@Test
	void everyCallStaysInTheZoneTheRegistryIntegrationSetOnLoadBalancerZoneConfig(CapturedOutput output) {
		int[] zone1 = new int[2];
		for (int i = 0; i < 2; i++) {
			zone1[i] = port(
					this.apps.start(WhoApp.class, "provider", "spring.cloud.zookeeper.discovery.metadata.zone=zone1"));
			this.apps.start(WhoApp.class, "provider", "spring.cloud.zookeeper.discovery.metadata.zone=zone2");
		}
		ConfigurableApplicationContext caller = this.apps.start(Caller.class, "caller", "test.registry-zone=zone1",
				"atlas.warmup.enabled=false");
		ZooKeeperApps.awaitInstances(caller, "provider", 4);
		assertThat(caller.getBean(LoadBalancerZoneConfig.class).getZone()).as("empty until the first call").isNull();
		assertThat(output)
			.contains("affinity=off unless a registry integration sets the zone of LoadBalancerZoneConfig");

		Map<Integer, Integer> byPort = new HashMap<>();
		RestClient client = caller.getBean(RestClient.Builder.class).build();
		for (int i = 0; i < 200; i++) {
			byPort.merge(Integer.parseInt(client.get().uri("http://provider/who").retrieve().body(String.class)), 1,
					Integer::sum);
		}
		assertThat(caller.getBean(LoadBalancerZoneConfig.class).getZone()).isEqualTo("zone1");
		// Every call to zone1 (100 %), both of its instances used.
		assertThat(byPort.keySet()).containsExactlyInAnyOrder(zone1[0], zone1[1]);
		assertThat(byPort.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(200);
		assertThat(output.getOut().split("the zone of Spring Cloud's LoadBalancerZoneConfig", -1)).hasSize(2);
		assertThat(output)
			.contains("this caller's cluster is 'zone1', the zone of Spring Cloud's LoadBalancerZoneConfig");
	}

	/** A caller whose zone only a registry integration sets, as Eureka's does. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@LoadBalancerClients(defaultConfiguration = RegistryZoneConfiguration.class)
	static class Caller {

		@Bean
		@LoadBalanced
		RestClient.Builder restClient() {
			return RestClient.builder();
		}

	}

	/**
	 * What {@code EurekaLoadBalancerClientConfiguration} does (spring-cloud-netflix,
	 * {@code @PostConstruct postprocess()}): in every load-balancer context, set the zone
	 * of the application's {@link LoadBalancerZoneConfig} from the registry's own
	 * settings when it has none yet.
	 */
	@Configuration(proxyBeanMethods = false)
	static class RegistryZoneConfiguration implements InitializingBean {

		private final LoadBalancerZoneConfig zoneConfig;

		private final Environment environment;

		RegistryZoneConfiguration(LoadBalancerZoneConfig zoneConfig, Environment environment) {
			this.zoneConfig = zoneConfig;
			this.environment = environment;
		}

		@Override
		public void afterPropertiesSet() {
			if (!StringUtils.hasText(this.zoneConfig.getZone())) {
				this.zoneConfig.setZone(this.environment.getProperty("test.registry-zone"));
			}
		}

	}

}
