package dev.atlas.autoconfigure.extension;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.actuator.AtlasEndpoint;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.pipeline.AtlasServiceInstanceListSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.client.RestClient;

import static dev.atlas.autoconfigure.ZooKeeperApps.port;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's own balancer for one service, declared with
 * {@code @LoadBalancerClient(name = "svc", configuration = ...)}, on real applications
 * and a real (in-process) ZooKeeper. The application's balancer wins and Atlas steps
 * aside completely for that service (no gray lane, no weights, no stage); every other
 * service is still routed by Atlas; startup and the first use say so.
 */
@ExtendWith(OutputCaptureExtension.class)
class ApplicationBalancerIT {

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	private static int svcBaseline;

	private static int svcCanary;

	private static int otherBaseline;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		// svc: a baseline instance of weight 5 and a v2 canary of weight 1.
		svcBaseline = port(apps.start(WhoApp.class, "svc", "spring.cloud.zookeeper.discovery.metadata.weight=5"));
		svcCanary = port(apps.start(WhoApp.class, "svc", "spring.cloud.zookeeper.discovery.metadata.version=v2"));
		otherBaseline = port(apps.start(WhoApp.class, "other"));
		apps.start(WhoApp.class, "other", "spring.cloud.zookeeper.discovery.metadata.version=v2");
		caller = apps.start(Caller.class, "caller", "atlas.warmup.enabled=false",
				"atlas.services.svc.loadbalancer.strategy=smooth-round-robin",
				"management.endpoints.web.exposure.include=atlas");
		ZooKeeperApps.awaitInstances(caller, "svc", 2);
		ZooKeeperApps.awaitInstances(caller, "other", 2);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static List<Integer> calls(String service, int times) {
		RestClient client = caller.getBean(RestClient.Builder.class).build();
		List<Integer> answers = new ArrayList<>();
		for (int i = 0; i < times; i++) {
			answers.add(Integer.parseInt(client.get().uri("http://" + service + "/who").retrieve().body(String.class)));
		}
		return answers;
	}

	@Test
	void theApplicationsBalancerAloneRoutesItsServiceAndAtlasTheOthers(CapturedOutput output) {
		assertThat(output).contains("Atlas is the load balancer of every @LoadBalanced client except svc "
				+ "(the application's own balancer; Atlas does not route it)");

		List<Integer> svc = calls("svc", 100);
		// Plain round robin: strict alternation, 50 / 50, whatever the weights (5 : 1)
		// and although untagged requests would never reach the v2 canary through Atlas.
		Map<Integer, Integer> shares = new HashMap<>();
		svc.forEach((port) -> shares.merge(port, 1, Integer::sum));
		assertThat(shares).isEqualTo(Map.of(svcBaseline, 50, svcCanary, 50));
		for (int i = 1; i < svc.size(); i++) {
			assertThat(svc.get(i)).as("call %d", i).isNotEqualTo(svc.get(i - 1));
		}
		LoadBalancerClientFactory factory = caller.getBean(LoadBalancerClientFactory.class);
		assertThat(factory.getInstance("svc")).isInstanceOf(RoundRobinLoadBalancer.class);
		assertThat(AtlasServiceInstanceListSupplier.find(factory.getInstance("svc", ServiceInstanceListSupplier.class)))
			.as("no Atlas stage")
			.isNull();

		Map<String, Object> view = caller.getBean(AtlasEndpoint.class).service("svc");
		assertThat(view).containsEntry("strategy", "RoundRobinLoadBalancer").containsEntry("instances", List.of());

		// Every other service still goes through Atlas: untagged calls stay in the
		// baseline lane.
		assertThat(calls("other", 50)).containsOnly(otherBaseline);
		assertThat(factory.getInstance("other")).isInstanceOf(AtlasLoadBalancer.class);

		calls("svc", 10);
		assertThat(output.getOut()
			.split("Service 'svc' uses the application's RoundRobinLoadBalancer; Atlas does not route it", -1))
			.as("said once, at the first use")
			.hasSize(2);
		assertThat(output).contains("atlas.services.svc.* not used");
		assertThat(output).doesNotContain("Service 'other' uses the application's");
	}

	/** A caller with its own round robin for {@code svc}. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@LoadBalancerClient(name = "svc", configuration = RoundRobinForSvc.class)
	static class Caller {

		@Bean
		@LoadBalanced
		RestClient.Builder restClient() {
			return RestClient.builder();
		}

	}

	/** Spring Cloud's own round robin, as its reference documentation shows it. */
	static class RoundRobinForSvc {

		@Bean
		ReactorLoadBalancer<ServiceInstance> roundRobin(Environment environment, LoadBalancerClientFactory factory) {
			String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
			return new RoundRobinLoadBalancer(factory.getLazyProvider(name, ServiceInstanceListSupplier.class), name);
		}

	}

}
