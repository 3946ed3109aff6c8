package dev.atlas.autoconfigure;

import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The application the integration tests start with {@link ZooKeeperApps}, as provider and
 * as caller.
 * <ul>
 * <li>As provider, {@code GET /who} answers who served the call: {@code app.answer} if
 * set, else its port; with status 503 when {@code app.fail=true}, else 200. It counts the
 * calls it served ({@link #served()}).</li>
 * <li>As caller, it calls {@code /who} of the service {@code app.target} (default
 * {@code provider}) through a load-balanced client: {@link #call()}, {@code GET /call},
 * or {@link #call(String)} to choose the client (RestClient, RestTemplate, WebClient,
 * Feign).</li>
 * </ul>
 * Thread-safe.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableFeignClients(clients = WhoApp.WhoClient.class)
@RestController
public class WhoApp {

	private final AtomicInteger served = new AtomicInteger();

	private final Environment environment;

	private final ObjectProvider<RestClient.Builder> restClient;

	private final ObjectProvider<RestTemplate> restTemplate;

	private final ObjectProvider<WhoClient> feign;

	private final ObjectProvider<WebClient.Builder> webClient;

	WhoApp(Environment environment, ObjectProvider<RestClient.Builder> restClient,
			ObjectProvider<RestTemplate> restTemplate, ObjectProvider<WhoClient> feign,
			ObjectProvider<WebClient.Builder> webClient) {
		this.environment = environment;
		this.restClient = restClient;
		this.restTemplate = restTemplate;
		this.feign = feign;
		this.webClient = webClient;
	}

	@Bean
	@LoadBalanced
	RestClient.Builder loadBalancedRestClientBuilder() {
		return RestClient.builder();
	}

	@Bean
	@LoadBalanced
	RestTemplate loadBalancedRestTemplate() {
		return new RestTemplate();
	}

	@Bean
	@LoadBalanced
	WebClient.Builder loadBalancedWebClientBuilder() {
		return WebClient.builder();
	}

	@GetMapping("/who")
	ResponseEntity<String> who() {
		this.served.incrementAndGet();
		String answer = this.environment.getProperty("app.answer",
				this.environment.getProperty("local.server.port", ""));
		boolean fail = this.environment.getProperty("app.fail", Boolean.class, false);
		return ResponseEntity.status(fail ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK).body(answer);
	}

	/**
	 * Calls {@code /who} of {@code app.target} through the load-balanced
	 * {@code RestClient}.
	 * @return the answer
	 */
	@GetMapping("/call")
	public String call() {
		return call("rest-client");
	}

	/**
	 * Calls {@code /who} of {@code app.target} through a load-balanced client.
	 * @param client {@code rest-client}, {@code rest-template}, {@code web-client}
	 * (blocks for the answer) or {@code feign}
	 * @return the answer
	 */
	public String call(String client) {
		String url = "http://" + this.environment.getProperty("app.target", "provider") + "/who";
		return switch (client) {
			case "rest-client" -> this.restClient.getObject().build().get().uri(url).retrieve().body(String.class);
			case "rest-template" -> this.restTemplate.getObject().getForObject(url, String.class);
			case "web-client" ->
				this.webClient.getObject().build().get().uri(url).retrieve().bodyToMono(String.class).block();
			case "feign" -> this.feign.getObject().who();
			default -> throw new IllegalArgumentException(client);
		};
	}

	/**
	 * How many {@code /who} calls this application served.
	 * @return the count since start
	 */
	public int served() {
		return this.served.get();
	}

	/** Feign client of {@code /who} on {@code app.target} (default {@code provider}). */
	@FeignClient(name = "${app.target:provider}", contextId = "who")
	interface WhoClient {

		@GetMapping("/who")
		String who();

	}

}
