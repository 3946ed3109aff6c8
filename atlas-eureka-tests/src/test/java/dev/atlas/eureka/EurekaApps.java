package dev.atlas.eureka;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import com.netflix.discovery.shared.Application;
import com.netflix.eureka.registry.PeerAwareInstanceRegistry;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;
import org.springframework.context.ConfigurableApplicationContext;

import static org.awaitility.Awaitility.await;

/**
 * A real Eureka server (Spring Cloud Netflix's, as {@code @EnableEurekaServer} runs it)
 * in-process on a random port, and real Spring Boot applications registered in it, for
 * the integration tests. Eureka's caches are tuned as Spring Cloud Netflix's
 * documentation recommends for fast propagation: the server answers from its read-write
 * cache ({@code eureka.server.use-read-only-response-cache=false}), clients fetch every
 * second and renew their lease every second. Closes the applications first, the server
 * last. Not thread-safe.
 */
final class EurekaApps implements AutoCloseable {

	private final ConfigurableApplicationContext server;

	private final List<ConfigurableApplicationContext> apps = new CopyOnWriteArrayList<>();

	/** Starts the server. */
	EurekaApps() {
		this.server = new SpringApplicationBuilder(EurekaServerApp.class)
			.properties("server.port=0", "spring.application.name=eureka-server", "spring.main.banner-mode=off",
					"eureka.client.register-with-eureka=false", "eureka.client.fetch-registry=false",
					"eureka.server.enable-self-preservation=false", "eureka.server.use-read-only-response-cache=false",
					"eureka.server.eviction-interval-timer-in-ms=1000",
					"eureka.server.wait-time-in-ms-when-sync-empty=0", "atlas.enabled=false")
			.run();
	}

	/**
	 * Where the server answers, as {@code eureka.client.service-url.defaultZone}.
	 * @return the URL, ending in {@code /eureka/}
	 */
	String url() {
		return "http://127.0.0.1:" + port(this.server) + "/eureka/";
	}

	/**
	 * Starts an application registered in the server: random port, address
	 * {@code 127.0.0.1}, a unique instance id, fetch and renewal every second, no drain
	 * (tests close many applications), then {@code properties}.
	 * @param source the application's configuration class
	 * @param name {@code spring.application.name}, the service id it registers as
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the running application, closed by {@link #close()}
	 */
	ConfigurableApplicationContext start(Class<?> source, String name, String... properties) {
		ConfigurableApplicationContext app = builder(source, name, properties).run();
		this.apps.add(app);
		return app;
	}

	/**
	 * The builder {@link #start} runs, for a test that runs it on a thread of its own;
	 * the test closes what it returns.
	 * @param source the application's configuration class
	 * @param name {@code spring.application.name}
	 * @param properties more {@code key=value} properties; later ones win
	 * @return the builder
	 */
	SpringApplicationBuilder builder(Class<?> source, String name, String... properties) {
		return new SpringApplicationBuilder(source)
			.properties("spring.application.name=" + name, "server.port=0", "spring.main.banner-mode=off",
					"eureka.client.service-url.defaultZone=" + url(), "eureka.instance.prefer-ip-address=true",
					"eureka.instance.ip-address=127.0.0.1", "eureka.instance.hostname=127.0.0.1",
					"eureka.instance.instance-id=" + name + ":${random.uuid}",
					"eureka.client.registry-fetch-interval-seconds=1",
					"eureka.client.initial-instance-info-replication-interval-seconds=1",
					"eureka.client.instance-info-replication-interval-seconds=1",
					"eureka.instance.lease-renewal-interval-in-seconds=1", "eureka.client.jersey.enabled=false",
					"atlas.lifecycle.drain=0s")
			.properties(properties);
	}

	/**
	 * The status the server holds for an application's instance, as callers fetch it.
	 * @param serviceId the service
	 * @param app the application
	 * @return its status, or {@code null} when the server does not list it
	 */
	InstanceStatus status(String serviceId, ConfigurableApplicationContext app) {
		Application application = this.server.getBean(PeerAwareInstanceRegistry.class).getApplication(serviceId);
		if (application == null) {
			return null;
		}
		String port = Integer.toString(port(app));
		return application.getInstances()
			.stream()
			.filter((instance) -> Integer.toString(instance.getPort()).equals(port))
			.map(InstanceInfo::getStatus)
			.findFirst()
			.orElse(null);
	}

	/**
	 * The statuses the server holds for a service's instances.
	 * @param serviceId the service
	 * @return one status per instance, empty when the server lists none
	 */
	List<InstanceStatus> statuses(String serviceId) {
		Application application = this.server.getBean(PeerAwareInstanceRegistry.class).getApplication(serviceId);
		return (application != null) ? application.getInstances().stream().map(InstanceInfo::getStatus).toList()
				: List.of();
	}

	/**
	 * The port an application listens on.
	 * @param app a running web application
	 * @return the port
	 */
	static int port(ConfigurableApplicationContext app) {
		return ((WebServerApplicationContext) app).getWebServer().getPort();
	}

	/**
	 * Waits (up to 30 s) until an application's discovery client lists a number of
	 * instances of a service.
	 * @param caller the application
	 * @param serviceId the service
	 * @param count the number of instances to wait for
	 */
	static void awaitInstances(ConfigurableApplicationContext caller, String serviceId, int count) {
		await().atMost(Duration.ofSeconds(30))
			.until(() -> caller.getBean(DiscoveryClient.class).getInstances(serviceId).size() == count);
	}

	@Override
	public void close() {
		// at once: each one that drains takes its drain
		this.apps.parallelStream().forEach(ConfigurableApplicationContext::close);
		this.server.close();
	}

	/** The Eureka server. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableEurekaServer
	static class EurekaServerApp {

	}

}
