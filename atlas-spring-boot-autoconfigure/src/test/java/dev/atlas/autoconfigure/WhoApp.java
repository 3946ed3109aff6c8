package dev.atlas.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

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
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpStatusCodeException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The application the integration tests start with {@link ZooKeeperApps}, as provider and
 * as caller.
 * <ul>
 * <li>As provider, {@code GET /who} answers who served the call: {@code app.answer} if
 * set, else its port; with status 503 (or {@code app.fail-status}) when
 * {@code app.fail=true}, else 200. It counts the calls it served ({@link #served()}). At
 * run time a test may make it answer 503 ({@link #fail(boolean)}, which overrides
 * {@code app.fail}) or hang: accept the connection and the request but answer only once
 * {@link #release() released} ({@link #hang()}). With {@code app.delay} (a duration, e.g.
 * {@code 200ms}) every call waits that long before it answers: a slow instance.</li>
 * <li>As caller, it calls {@code /who} of the service {@code app.target} (default
 * {@code provider}) through a load-balanced client: {@link #call()}, {@code GET /call},
 * or {@link #call(String)} to choose the client (RestClient, RestTemplate, WebClient,
 * Feign). With {@code app.read-timeout} (a duration) its load-balanced
 * {@code RestTemplate} gives up reading an answer after that long (and connecting after
 * the same); without it, it waits as long as the JDK does.</li>
 * </ul>
 * Thread-safe.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableFeignClients(clients = WhoApp.WhoClient.class)
@RestController
public class WhoApp {

	private final AtomicInteger served = new AtomicInteger();

	/** {@code /who} calls being served now. */
	private final AtomicInteger inFlight = new AtomicInteger();

	/** The most {@code /who} calls served at once since start. */
	private final AtomicInteger maxInFlight = new AtomicInteger();

	/** {@code /relay} calls served. */
	private final AtomicInteger relayed = new AtomicInteger();

	/** {@code /who} calls answered 200. */
	private final AtomicInteger succeeded = new AtomicInteger();

	/**
	 * {@code app.capacity}: {@code /who} calls served at once, above which a call is
	 * answered 503 at once (a capped fleet, as a server with a bounded pool and no
	 * queue); 0 for no cap.
	 */
	private final int capacity;

	private final Environment environment;

	/** Built once: building one makes its message converters (a JSON mapper) anew. */
	private final Supplier<RestClient> restClient;

	private final ObjectProvider<RestTemplate> restTemplate;

	private final ObjectProvider<WhoClient> feign;

	/** Built once, as {@link #restClient}. */
	private final Supplier<WebClient> webClient;

	/** {@code app.delay}: how long each {@code /who} waits before answering. */
	private final Duration delay;

	/** Overrides {@code app.fail} when set. */
	private volatile @Nullable Boolean fail;

	/** Set while {@code /who} hangs: each call waits for it. */
	private volatile @Nullable CountDownLatch hang;

	WhoApp(Environment environment, ObjectProvider<RestClient.Builder> restClient,
			ObjectProvider<RestTemplate> restTemplate, ObjectProvider<WhoClient> feign,
			ObjectProvider<WebClient.Builder> webClient) {
		this.environment = environment;
		this.restClient = SingletonSupplier.of(() -> restClient.getObject().build());
		this.restTemplate = restTemplate;
		this.feign = feign;
		this.webClient = SingletonSupplier.of(() -> webClient.getObject().build());
		this.delay = environment.getProperty("app.delay", Duration.class, Duration.ZERO);
		this.capacity = environment.getProperty("app.capacity", Integer.class, 0);
	}

	/**
	 * The load-balanced {@code RestClient.Builder}, on the JDK's {@code HttpClient}: the
	 * default, Apache HttpClient 5 (on the class path through the Nacos client), re-sends
	 * an answer with 503 itself after 1 s (its {@code DefaultHttpRequestRetryStrategy}),
	 * a retry layer under Spring Cloud's that the tests of Atlas's retries must not
	 * count.
	 * @return the builder
	 */
	@Bean
	@LoadBalanced
	RestClient.Builder loadBalancedRestClientBuilder() {
		return RestClient.builder().requestFactory(new JdkClientHttpRequestFactory());
	}

	@Bean
	@LoadBalanced
	RestTemplate loadBalancedRestTemplate() {
		Duration timeout = this.environment.getProperty("app.read-timeout", Duration.class);
		if (timeout == null) {
			return new RestTemplate();
		}
		SimpleClientHttpRequestFactory requests = new SimpleClientHttpRequestFactory();
		requests.setConnectTimeout(timeout);
		requests.setReadTimeout(timeout);
		return new RestTemplate(requests);
	}

	@Bean
	@LoadBalanced
	WebClient.Builder loadBalancedWebClientBuilder() {
		return WebClient.builder();
	}

	@GetMapping("/who")
	ResponseEntity<String> who() throws InterruptedException {
		return answer();
	}

	/**
	 * As {@code GET /who}, for a POST (a method Spring Cloud does not retry).
	 * @param body ignored
	 * @return the answer
	 * @throws InterruptedException when interrupted while hanging or delayed
	 */
	@PostMapping("/who")
	ResponseEntity<String> postWho(@RequestBody(required = false) @Nullable String body) throws InterruptedException {
		return answer();
	}

	private ResponseEntity<String> answer() throws InterruptedException {
		int now = this.inFlight.incrementAndGet();
		this.maxInFlight.accumulateAndGet(now, Math::max);
		try {
			if (this.capacity > 0 && now > this.capacity) {
				this.served.incrementAndGet();
				return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("over capacity");
			}
			ResponseEntity<String> answer = answerNow();
			if (answer.getStatusCode().value() == 200) {
				this.succeeded.incrementAndGet();
			}
			return answer;
		}
		finally {
			this.inFlight.decrementAndGet();
		}
	}

	private ResponseEntity<String> answerNow() throws InterruptedException {
		this.served.incrementAndGet();
		CountDownLatch hanging = this.hang;
		if (hanging != null) {
			hanging.await();
		}
		if (!this.delay.isZero() && !this.delay.isNegative()) {
			Thread.sleep(this.delay.toMillis());
		}
		String answer = this.environment.getProperty("app.answer",
				this.environment.getProperty("local.server.port", ""));
		Boolean override = this.fail;
		boolean fail = (override != null) ? override : this.environment.getProperty("app.fail", Boolean.class, false);
		return ResponseEntity
			.status(fail ? this.environment.getProperty("app.fail-status", Integer.class, 503) : HttpStatus.OK.value())
			.body(answer);
	}

	/**
	 * Echoes a path segment and a query parameter as this application decoded them.
	 * @param segment the last path segment
	 * @param name the {@code name} query parameter
	 * @return {@code segment|name}
	 */
	@GetMapping("/echo/{segment}")
	String echo(@PathVariable String segment, @RequestParam String name) {
		return segment + '|' + name;
	}

	/**
	 * Calls {@code /echo/{segment}?name={name}} of {@code app.target} through a
	 * load-balanced client, which encodes the values as it does for any call.
	 * @param client {@code rest-client}, {@code rest-template}, {@code web-client} or
	 * {@code feign}
	 * @param segment the path segment to send
	 * @param name the query parameter to send
	 * @return the answer: {@code segment|name} as the target decoded them
	 */
	public @Nullable String echo(String client, String segment, String name) {
		String url = "http://" + this.environment.getProperty("app.target", "provider") + "/echo/{segment}?name={name}";
		return switch (client) {
			case "rest-client" -> this.restClient.get().get().uri(url, segment, name).retrieve().body(String.class);
			case "rest-template" -> this.restTemplate.getObject().getForObject(url, String.class, segment, name);
			case "web-client" ->
				this.webClient.get().get().uri(url, segment, name).retrieve().bodyToMono(String.class).block();
			case "feign" -> this.feign.getObject().echo(segment, name);
			default -> throw new IllegalArgumentException(client);
		};
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
	 * Calls {@code app.target} through the load-balanced {@code RestClient} and answers
	 * as it did: its body with 200, or its error status and body (a middle service that
	 * passes its downstream's failure on).
	 * @return the answer
	 */
	@GetMapping("/relay")
	ResponseEntity<String> relay() {
		this.relayed.incrementAndGet();
		try {
			return ResponseEntity.ok(call("rest-client"));
		}
		catch (HttpStatusCodeException failed) {
			return ResponseEntity.status(failed.getStatusCode()).body(failed.getResponseBodyAsString());
		}
	}

	/**
	 * How many {@code /relay} calls this application served.
	 * @return the count since start
	 */
	public int relayed() {
		return this.relayed.get();
	}

	/**
	 * Calls {@code /who} (or {@code app.path}) of {@code app.target} through a
	 * load-balanced client (Feign: {@code /who} always).
	 * @param client {@code rest-client}, {@code rest-template}, {@code web-client}
	 * (blocks for the answer) or {@code feign}
	 * @return the answer
	 */
	public String call(String client) {
		String url = "http://" + this.environment.getProperty("app.target", "provider")
				+ this.environment.getProperty("app.path", "/who");
		return switch (client) {
			case "rest-client" -> this.restClient.get().get().uri(url).retrieve().body(String.class);
			case "rest-template" -> this.restTemplate.getObject().getForObject(url, String.class);
			case "web-client" -> this.webClient.get().get().uri(url).retrieve().bodyToMono(String.class).block();
			case "feign" -> this.feign.getObject().who();
			default -> throw new IllegalArgumentException(client);
		};
	}

	/**
	 * POSTs to {@code /who} of {@code app.target} through a load-balanced client.
	 * @param client {@code rest-client}, {@code rest-template}, {@code web-client}
	 * (blocks for the answer) or {@code feign}
	 * @return the answer
	 */
	public String post(String client) {
		String url = "http://" + this.environment.getProperty("app.target", "provider") + "/who";
		return switch (client) {
			case "rest-client" -> this.restClient.get().post().uri(url).body("order").retrieve().body(String.class);
			case "rest-template" -> this.restTemplate.getObject().postForObject(url, "order", String.class);
			case "web-client" ->
				this.webClient.get().post().uri(url).bodyValue("order").retrieve().bodyToMono(String.class).block();
			case "feign" -> this.feign.getObject().postWho("order");
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

	/**
	 * How many {@code /who} calls this application answered 200.
	 * @return the count since start
	 */
	public int succeeded() {
		return this.succeeded.get();
	}

	/**
	 * The most {@code /who} calls this application served at once.
	 * @return the count since start
	 */
	public int maxInFlight() {
		return this.maxInFlight.get();
	}

	/**
	 * Makes {@code /who} answer 503 ({@code true}) or 200 ({@code false}) from now on,
	 * whatever {@code app.fail} says.
	 * @param failing whether to fail
	 */
	public void fail(boolean failing) {
		this.fail = failing;
	}

	/**
	 * Makes {@code /who} hang from now on: each call is accepted and counted, then waits
	 * until {@link #release()}. No-op while already hanging.
	 */
	public synchronized void hang() {
		if (this.hang == null) {
			this.hang = new CountDownLatch(1);
		}
	}

	/**
	 * Ends the hang: every waiting call answers now (to a caller that may have given up),
	 * and later calls do not wait. No-op when not hanging.
	 */
	public synchronized void release() {
		CountDownLatch hanging = this.hang;
		this.hang = null;
		if (hanging != null) {
			hanging.countDown();
		}
	}

	/** Feign client of {@code /who} on {@code app.target} (default {@code provider}). */
	@FeignClient(name = "${app.target:provider}", contextId = "who")
	interface WhoClient {

		@GetMapping("/who")
		String who();

		@PostMapping("/who")
		String postWho(@RequestBody String body);

		@GetMapping("/echo/{segment}")
		String echo(@PathVariable("segment") String segment, @RequestParam("name") String name);

	}

}
