package dev.atlas.autoconfigure.extension;

import java.util.HashSet;
import java.util.Set;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's own candidate filter and strategy, declared as beans and nothing
 * else, on real applications and a real (in-process) ZooKeeper: a filter that leaves out
 * instances whose metadata says {@code maintenance=true}, and a strategy registered as
 * {@code pinned} that reads a request header through its pick context. Neither touches an
 * Atlas class: this file is the whole change that adds them.
 */
class ExtensionPointsIT {

	private static ZooKeeperApps apps;

	private static ConfigurableApplicationContext caller;

	private static int inMaintenance;

	private static int lowestServing;

	private static int highestServing;

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		int[] ports = new int[3];
		for (int i = 0; i < 3; i++) {
			ports[i] = ZooKeeperApps.port(apps.start(WhoApp.class, "provider",
					"spring.cloud.zookeeper.discovery.metadata.maintenance=" + (i == 0)));
		}
		inMaintenance = ports[0];
		lowestServing = Math.min(ports[1], ports[2]);
		highestServing = Math.max(ports[1], ports[2]);
		caller = apps.start(Caller.class, "caller", "atlas.loadbalancer.strategy=pinned", "atlas.warmup.enabled=false");
		ZooKeeperApps.awaitInstances(caller, "provider", 3);
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	private static int call(String pin) {
		RestClient.RequestHeadersSpec<?> spec = caller.getBean(RestClient.Builder.class)
			.build()
			.get()
			.uri("http://provider/who");
		if (pin != null) {
			spec = spec.header("X-Pin", pin);
		}
		return Integer.parseInt(spec.retrieve().body(String.class));
	}

	@Test
	void theApplicationsStrategyChoosesAmongWhatItsFilterLeaves() {
		Set<Integer> served = new HashSet<>();
		for (int i = 0; i < 30; i++) {
			served.add(call(null));
		}
		assertThat(served).as("no header: the lowest port that is not in maintenance").containsExactly(lowestServing);
		assertThat(call(Integer.toString(highestServing))).as("pinned by header").isEqualTo(highestServing);
		assertThat(call(Integer.toString(inMaintenance))).as("pinned to an instance the filter left out")
			.isEqualTo(lowestServing);
	}

	/** The caller, with its own filter and strategy beans. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Caller {

		@Bean
		@LoadBalanced
		RestClient.Builder restClient() {
			return RestClient.builder();
		}

		@Bean
		CandidateFilter noMaintenance() {
			return CandidateFilter.excluding((instance) -> "true".equals(instance.getMetadata().get("maintenance")));
		}

		@Bean
		StrategyFactory pinned() {
			return new StrategyFactory() {

				@Override
				public String name() {
					return "pinned";
				}

				@Override
				public LoadBalancingStrategy create(StrategySettings settings) {
					return new Pinned();
				}

			};
		}

	}

	/**
	 * The candidate whose port the {@code X-Pin} header names, else the one with the
	 * lowest port.
	 */
	static final class Pinned implements LoadBalancingStrategy {

		@Override
		public int choose(InstanceSnapshot candidates, PickContext context) {
			String pin = context.header("x-pin");
			int lowest = -1;
			for (int i = 0; i < candidates.size(); i++) {
				int port = candidates.get(i).getPort();
				if (pin != null && pin.equals(Integer.toString(port))) {
					return i;
				}
				if (lowest < 0 || port < candidates.get(lowest).getPort()) {
					lowest = i;
				}
			}
			return lowest;
		}

		@Override
		public String name() {
			return "pinned";
		}

	}

}
