package dev.atlas.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.curator.test.TestingServer;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;

import static org.awaitility.Awaitility.await;

/**
 * Real Spring Boot applications on random ports, registered in a real ZooKeeper running
 * in-process, for the integration tests: starts the registry, starts applications with
 * the properties all of them need, waits for discovery, and closes everything,
 * applications first, registry last. Not thread-safe.
 */
public final class ZooKeeperApps implements AutoCloseable {

	private final TestingServer zookeeper;

	private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

	/**
	 * Starts the registry.
	 * @throws Exception if ZooKeeper cannot start
	 */
	public ZooKeeperApps() throws Exception {
		this.zookeeper = new TestingServer(true);
	}

	/**
	 * Starts an application registered in the registry: random port, host
	 * {@code 127.0.0.1}, Nacos off, no banner, no drain on shutdown (tests close many
	 * applications), then {@code properties}.
	 * @param source the application's configuration class
	 * @param name {@code spring.application.name}, the service id it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the running application, closed by {@link #close()}
	 */
	public ConfigurableApplicationContext start(Class<?> source, String name, String... properties) {
		return start(new SpringApplicationBuilder(source), name, properties);
	}

	/**
	 * Starts an application as {@link #start(Class, String, String...)} does, from a
	 * builder the caller has prepared (with initializers or listeners of its own).
	 * @param builder the application's builder
	 * @param name {@code spring.application.name}, the service id it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the running application, closed by {@link #close()}
	 */
	public ConfigurableApplicationContext start(SpringApplicationBuilder builder, String name, String... properties) {
		ConfigurableApplicationContext app = builder.properties("spring.application.name=" + name, "server.port=0",
				"spring.cloud.zookeeper.connect-string=" + this.zookeeper.getConnectString(),
				"spring.cloud.zookeeper.discovery.instance-host=127.0.0.1",
				"spring.cloud.nacos.discovery.enabled=false", "spring.main.banner-mode=off", "atlas.lifecycle.drain=0s")
			.properties(properties)
			.run();
		this.apps.add(app);
		return app;
	}

	/**
	 * Where the registry listens, for a test's own ZooKeeper client and for applications
	 * started elsewhere (e.g. {@link ForkedApp}).
	 * @return ZooKeeper's connect string, {@code host:port}
	 */
	public String connectString() {
		return this.zookeeper.getConnectString();
	}

	/**
	 * The port an application listens on.
	 * @param app a running web application
	 * @return the port
	 */
	public static int port(ConfigurableApplicationContext app) {
		return ((WebServerApplicationContext) app).getWebServer().getPort();
	}

	/**
	 * Waits (up to 20 s) until an application's discovery client lists a number of
	 * instances of a service.
	 * @param caller the application
	 * @param serviceId the service
	 * @param count the number of instances to wait for
	 */
	public static void awaitInstances(ConfigurableApplicationContext caller, String serviceId, int count) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> caller.getBean(DiscoveryClient.class).getInstances(serviceId).size() == count);
	}

	/**
	 * The instance of a provider as a caller's discovery client lists it.
	 * @param caller the calling application
	 * @param serviceId the provider's service
	 * @param provider the provider application
	 * @return the instance listening on the provider's port
	 * @throws java.util.NoSuchElementException when the caller does not list it
	 */
	public static ServiceInstance instance(ConfigurableApplicationContext caller, String serviceId,
			ConfigurableApplicationContext provider) {
		int port = port(provider);
		return caller.getBean(DiscoveryClient.class)
			.getInstances(serviceId)
			.stream()
			.filter((instance) -> instance.getPort() == port)
			.findFirst()
			.orElseThrow();
	}

	@Override
	public void close() throws Exception {
		this.apps.forEach(ConfigurableApplicationContext::close);
		this.zookeeper.close();
	}

}
