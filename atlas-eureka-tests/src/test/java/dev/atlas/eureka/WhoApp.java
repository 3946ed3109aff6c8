package dev.atlas.eureka;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * The application the Eureka integration tests start, as provider and as caller. As
 * provider, {@code GET /who} answers its port and counts the calls it served, with the
 * time of the last one. As caller, {@link #call(String, Map)} calls {@code /who} of a
 * service through a load-balanced {@code RestClient}. With {@code app.hold-start=true},
 * an {@code ApplicationRunner} waits for {@link #hold} before the application is ready
 * (slow cache loading, say). Thread-safe.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@RestController
public class WhoApp {

	/**
	 * What an application with {@code app.hold-start=true} waits for (up to 60 s) before
	 * it is ready; a test sets a new latch before it starts one.
	 */
	static final AtomicReference<CountDownLatch> hold = new AtomicReference<>(new CountDownLatch(0));

	/**
	 * Counted down when an application with {@code app.hold-start=true} begins to wait.
	 */
	static final AtomicReference<CountDownLatch> holding = new AtomicReference<>(new CountDownLatch(0));

	private final AtomicInteger served = new AtomicInteger();

	private final AtomicLong lastServedAt = new AtomicLong(-1);

	private final Environment environment;

	private final Supplier<RestClient> restClient;

	WhoApp(Environment environment, @LoadBalanced ObjectProvider<RestClient.Builder> restClient) {
		this.environment = environment;
		this.restClient = SingletonSupplier.of(() -> restClient.getObject().build());
	}

	/**
	 * The builder for calls that are not load-balanced: Eureka's own client takes the
	 * application's {@code RestClient.Builder} for its calls to the server, and a
	 * load-balanced one would resolve the server's host as a service id
	 * (spring-cloud-netflix#4591).
	 * @return a plain builder
	 */
	@Bean
	@Primary
	RestClient.Builder restClientBuilder() {
		return RestClient.builder();
	}

	@Bean
	@LoadBalanced
	RestClient.Builder loadBalancedRestClientBuilder() {
		return RestClient.builder().requestFactory(new JdkClientHttpRequestFactory());
	}

	@Bean
	ApplicationRunner holdStart(ObjectProvider<DiscoveryClient> discovery) {
		return (arguments) -> {
			if (this.environment.getProperty("app.discover-at-start", Boolean.class, false)) {
				discovery.getObject().getServices();
			}
			if (this.environment.getProperty("app.hold-start", Boolean.class, false)) {
				holding.get().countDown();
				hold.get().await(60, TimeUnit.SECONDS);
			}
		};
	}

	@GetMapping("/who")
	String who() {
		this.served.incrementAndGet();
		this.lastServedAt.set(System.nanoTime());
		return this.environment.getProperty("local.server.port");
	}

	/**
	 * Calls {@code /who} of {@code app.target} (default {@code provider}) through the
	 * load balancer.
	 * @param headers request headers
	 * @return the port of the instance that answered
	 */
	String call(Map<String, String> headers) {
		return call(this.environment.getProperty("app.target", "provider"), headers);
	}

	/**
	 * Calls {@code /who} of a service through the load balancer.
	 * @param target the service id
	 * @param headers request headers
	 * @return the port of the instance that answered
	 */
	String call(String target, Map<String, String> headers) {
		return this.restClient.get()
			.get()
			.uri("http://" + target + "/who")
			.headers((http) -> headers.forEach(http::add))
			.retrieve()
			.body(String.class);
	}

	/**
	 * The calls to {@code /who} served.
	 * @return the count
	 */
	int served() {
		return this.served.get();
	}

	/**
	 * When the last call to {@code /who} was served.
	 * @return {@link System#nanoTime()} then, or {@code -1} before the first
	 */
	long lastServedAt() {
		return this.lastServedAt.get();
	}

}
