package dev.atlas.sample.order;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.atlas.sample.registry.EmbeddedRegistry;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static org.awaitility.Awaitility.await;

/**
 * The samples started by an integration test: an in-process ZooKeeper and applications on
 * random ports registered in it, all in this JVM. Closing stops the applications in
 * reverse order of start (callers, started last, before the providers they call;
 * providers deregister on close), then the registry. Not thread-safe.
 */
final class SampleFleet implements AutoCloseable {

	private final EmbeddedRegistry registry;

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	/**
	 * Starts the registry.
	 * @throws Exception if ZooKeeper cannot start
	 */
	SampleFleet() throws Exception {
		this.registry = EmbeddedRegistry.start(0);
	}

	/**
	 * Starts an application with the arguments every sample here needs (random port, this
	 * registry, no banner, no drain: the whole fleet stops at once, no caller is left to
	 * drain for), then {@code extra}.
	 * @param application the application to run
	 * @param extra more {@code --key=value} arguments; later ones win
	 * @return the running application, closed by {@link #close()}
	 */
	ConfigurableApplicationContext start(SpringApplicationBuilder application, String... extra) {
		List<String> args = new ArrayList<>(
				List.of("--server.port=0", "--spring.cloud.zookeeper.connect-string=" + this.registry.connectString(),
						"--spring.main.banner-mode=off", "--atlas.lifecycle.drain=0s"));
		args.addAll(List.of(extra));
		ConfigurableApplicationContext context = application.run(args.toArray(String[]::new));
		this.contexts.add(context);
		return context;
	}

	/**
	 * Waits (up to 30 s) until a caller discovers a number of user-service instances: the
	 * balancer caches the first list it sees, so tests make sure it is complete first.
	 * @param caller the calling application
	 * @param description what is awaited, for the failure message
	 * @param count the number of user-service instances
	 */
	static void awaitUserServices(ConfigurableApplicationContext caller, String description, int count) {
		DiscoveryClient discovery = caller.getBean(DiscoveryClient.class);
		await(description).atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> discovery.getInstances(TrafficService.USER_SERVICE).size() == count);
	}

	/**
	 * Stops every application, last started first, then the registry; rethrows the first
	 * failure to close an application after trying all of them.
	 */
	@Override
	public void close() throws Exception {
		RuntimeException failure = null;
		for (int i = this.contexts.size() - 1; i >= 0; i--) {
			try {
				this.contexts.get(i).close();
			}
			catch (RuntimeException ex) {
				failure = (failure != null) ? failure : ex;
			}
		}
		this.contexts.clear();
		this.registry.close();
		if (failure != null) {
			throw failure;
		}
	}

}
