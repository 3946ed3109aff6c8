package dev.atlas.autoconfigure.client;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.loadbalancer.stats.InstanceStats;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance registered with an IPv6 literal host without brackets ({@code ::1}, as
 * Nacos lists IPv6 instances) is reached through every load-balanced client for plain,
 * non-ASCII and reserved-character paths and queries. The clients percent-encode the last
 * two, and Spring Cloud's {@code LoadBalancerUriTools} rebuilt such a URI with the
 * unbracketed host and failed ({@code Invalid character ':' for HOST_IPV4}). Real
 * applications on the in-process ZooKeeper, a provider listening on every address and
 * registered as {@code ::1}, another as {@code [::1]} (which worked before too).
 */
class Ipv6InstanceIT {

	/** Service id → the host its one instance registers with. */
	private static final Map<String, String> SERVICES = Map.of("ipv6-provider", "::1", "bracketed-ipv6-provider",
			"[::1]");

	private static ZooKeeperApps apps;

	private static final Map<String, ConfigurableApplicationContext> callers = new HashMap<>();

	@BeforeAll
	static void start() throws Exception {
		apps = new ZooKeeperApps();
		SERVICES.forEach((service, host) -> {
			apps.start(WhoApp.class, service, "spring.cloud.zookeeper.discovery.instance-host=" + host);
			ConfigurableApplicationContext caller = apps.start(WhoApp.class, service + "-caller",
					"app.target=" + service);
			ZooKeeperApps.awaitInstances(caller, service, 1);
			List<ServiceInstance> listed = caller.getBean(DiscoveryClient.class).getInstances(service);
			assertThat(listed).singleElement().extracting(ServiceInstance::getHost).isEqualTo(host);
			callers.put(service, caller);
		});
	}

	@AfterAll
	static void stop() throws Exception {
		apps.close();
	}

	static Stream<Arguments> calls() {
		List<List<String>> values = List.of(List.of("1", "plain"), List.of("测试", "测试"), List.of("a b%31", "x&y=z/ü"));
		return SERVICES.keySet()
			.stream()
			.sorted()
			.flatMap((service) -> Stream.of("rest-client", "rest-template", "web-client", "feign")
				.flatMap((client) -> values.stream()
					.map((value) -> Arguments.of(service, client, value.get(0), value.get(1)))));
	}

	/**
	 * The WebClient filters hand Spring Cloud the instance with its host in brackets;
	 * Atlas's statistics still count the call on the listed instance, in flight and done.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "web-client", "rest-client" })
	void theStatisticsCountTheCallOnTheListedInstance(String client) {
		ConfigurableApplicationContext caller = callers.get("ipv6-provider");
		ServiceInstance listed = caller.getBean(DiscoveryClient.class).getInstances("ipv6-provider").get(0);
		InstanceStats stats = caller.getBean(LoadBalancerClientFactory.class)
			.getInstance("ipv6-provider", InstanceStats.class);
		caller.getBean(WhoApp.class).echo(client, "测试", "x");
		long before = stats.requests(listed);
		caller.getBean(WhoApp.class).echo(client, "测试", "x");
		assertThat(stats.requests(listed)).isEqualTo(before + 1);
		assertThat(stats.inFlight(listed)).isZero();
	}

	@ParameterizedTest(name = "{0} via {1}: /echo/{2}?name={3}")
	@MethodSource("calls")
	void everyClientReachesAnIpv6InstanceWhateverTheUri(String service, String client, String segment, String name) {
		assertThat(callers.get(service).getBean(WhoApp.class).echo(client, segment, name))
			.isEqualTo(segment + '|' + name);
	}

}
