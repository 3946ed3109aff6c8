package dev.atlas.sample.user;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code GET /users/{id}}: a made-up user plus the identity of the instance that served
 * it and the routing headers the request arrived with.
 *
 * <p>
 * {@code GET /users/{id}/next}: the same, plus a second hop: this instance fetches the
 * user again from {@code http://user-service/users/{id}} through a {@code @LoadBalanced}
 * WebClient, <em>after</em> the Reactor chain has moved to
 * {@link Schedulers#boundedElastic()}, i.e. on a thread that is not the one serving the
 * inbound request (the gray header must survive a hop to another scheduler). The answer
 * names that thread and nests the second hop's user, with its own {@code servedBy}. The
 * Mono is returned to Spring MVC; with {@code ?block=true} the servlet thread blocks on
 * it instead.
 *
 * <p>
 * With {@code sample.capacity} set, a request above that many at once is answered 503 at
 * once. With {@code sample.delay} set (e.g. {@code --sample.delay=200ms}), every user
 * this instance serves is answered that much later: the servlet thread waits before
 * building it, as a slow instance would. With {@code sample.cpu-cost} set (e.g.
 * {@code --sample.cpu-cost=2x}), every user costs that many ms of the serving thread's
 * CPU time: a smaller instance, slower by CPU rather than by waiting.
 */
@RestController
public class UserController {

	/**
	 * The header naming the wanted gray tag (Atlas's default {@code atlas.gray.header}).
	 */
	public static final String VERSION_HEADER = "X-Service-Version";

	/**
	 * A header a caller may set to say who it is (order-service's RestTemplate sets it).
	 */
	public static final String CALLER_HEADER = "X-Caller";

	static final String USER_URL = "http://user-service/users/{id}";

	/** The longest the second hop may take (order-service's Feign client waits 10 s). */
	static final Duration NEXT_HOP_TIMEOUT = Duration.ofSeconds(8);

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private final SampleProperties sample;

	/** {@code sample.cpu-cost}, ns of CPU per user served. */
	private final long cpuCostNanos;

	/** Keeps the CPU work from being optimized away. */
	private volatile long sink;

	/** {@code GET /users/{id}} being served now. */
	private final AtomicInteger serving = new AtomicInteger();

	private final WebClient webClient;

	private volatile int port;

	/**
	 * @param sample this instance's sample properties
	 * @param webClientBuilder the load-balanced WebClient builder (the second hop)
	 */
	public UserController(SampleProperties sample, WebClient.Builder webClientBuilder) {
		this.sample = sample;
		this.cpuCostNanos = sample.cpuCostNanos();
		this.webClient = webClientBuilder.build();
	}

	/**
	 * Remembers the port the web server actually listens on ({@code server.port=0}
	 * included).
	 * @param event the web server's initialization event
	 */
	@EventListener
	public void onWebServerInitialized(WebServerInitializedEvent event) {
		if (event.getApplicationContext().getServerNamespace() == null) {
			this.port = event.getWebServer().getPort();
		}
	}

	/**
	 * @param id the user id
	 * @param version the inbound {@value #VERSION_HEADER} header, if any
	 * @param caller the inbound {@value #CALLER_HEADER} header, if any
	 * @return the user, with {@code servedBy} naming this instance, after
	 * {@code sample.delay}
	 * @throws InterruptedException if interrupted while delaying the answer
	 */
	@GetMapping("/users/{id}")
	public User user(@PathVariable long id, @RequestHeader(name = VERSION_HEADER, required = false) String version,
			@RequestHeader(name = CALLER_HEADER, required = false) String caller) throws InterruptedException {
		int now = this.serving.incrementAndGet();
		try {
			if (this.sample.capacity() > 0 && now > this.sample.capacity()) {
				throw new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE,
						"over capacity (sample.capacity=" + this.sample.capacity() + ")");
			}
			delay();
			burn();
			return new User(id, "user-" + id, servedBy(), new Received(version, caller));
		}
		finally {
			this.serving.decrementAndGet();
		}
	}

	/**
	 * Serves the user and makes the second, load-balanced hop to user-service from a
	 * {@code boundedElastic} thread. The Mono is returned to Spring MVC, which subscribes
	 * to it; nothing in this method copies the gray header by hand.
	 * @param id the user id
	 * @param version the inbound {@value #VERSION_HEADER} header, if any
	 * @param caller the inbound {@value #CALLER_HEADER} header, if any
	 * @return the user as {@link #user} serves it, plus the thread that made the second
	 * hop and the user the second hop returned
	 * @throws InterruptedException if interrupted while delaying the answer
	 */
	@GetMapping("/users/{id}/next")
	public Mono<NextUser> next(@PathVariable long id,
			@RequestHeader(name = VERSION_HEADER, required = false) String version,
			@RequestHeader(name = CALLER_HEADER, required = false) String caller) throws InterruptedException {
		return nextHop(user(id, version, caller));
	}

	/**
	 * The same as {@link #next}, but the servlet thread blocks on the Mono itself
	 * ({@code ?block=true}): the other common way to use a WebClient from Spring MVC.
	 * @param id the user id
	 * @param version the inbound {@value #VERSION_HEADER} header, if any
	 * @param caller the inbound {@value #CALLER_HEADER} header, if any
	 * @return as {@link #next}
	 * @throws InterruptedException if interrupted while delaying the answer
	 */
	@GetMapping(path = "/users/{id}/next", params = "block=true")
	public @Nullable NextUser nextBlocking(@PathVariable long id,
			@RequestHeader(name = VERSION_HEADER, required = false) String version,
			@RequestHeader(name = CALLER_HEADER, required = false) String caller) throws InterruptedException {
		return nextHop(user(id, version, caller)).block();
	}

	private Mono<NextUser> nextHop(User self) {
		long id = self.id();
		return Mono.fromCallable(() -> id).subscribeOn(Schedulers.boundedElastic()).flatMap((userId) -> {
			// runs on the boundedElastic thread that makes the second hop
			String thread = Thread.currentThread().getName();
			return this.webClient.get()
				.uri(USER_URL, userId)
				.retrieve()
				.bodyToMono(User.class)
				.map((next) -> new NextUser(self.id(), self.name(), self.servedBy(), self.received(), thread, next));
		}).timeout(NEXT_HOP_TIMEOUT);
	}

	/** Spends {@code sample.cpu-cost} of the serving thread's CPU time. */
	private void burn() {
		long cost = this.cpuCostNanos;
		if (cost <= 0) {
			return;
		}
		long start = THREADS.getCurrentThreadCpuTime();
		long x = start;
		while (THREADS.getCurrentThreadCpuTime() - start < cost) {
			for (int i = 0; i < 500; i++) {
				x = x * 6364136223846793005L + 1442695040888963407L;
			}
		}
		this.sink = x;
	}

	/** Waits {@code sample.delay}, if positive, on the serving thread. */
	private void delay() throws InterruptedException {
		Duration delay = this.sample.delay();
		if (delay != null && !delay.isNegative() && !delay.isZero()) {
			TimeUnit.NANOSECONDS.sleep(delay.toNanos());
		}
	}

	private ServedBy servedBy() {
		return new ServedBy(instanceId(), this.sample.host(), this.port, this.sample.tag(), this.sample.cluster(),
				this.sample.weight());
	}

	private String instanceId() {
		String id = this.sample.instanceId();
		return (id == null || id.isBlank()) ? this.sample.host() + ":" + this.port : id;
	}

	/**
	 * The response body of {@code /users/{id}}.
	 *
	 * @param id the user id
	 * @param name the user's name
	 * @param servedBy the instance that answered
	 * @param received the routing headers the request arrived with
	 */
	public record User(long id, String name, ServedBy servedBy, Received received) {
	}

	/**
	 * The response body of {@code /users/{id}/next}: this hop's user, and the second
	 * hop's.
	 *
	 * @param id the user id
	 * @param name the user's name
	 * @param servedBy the instance that answered (hop 1 when order-service calls it)
	 * @param received the routing headers the request arrived with
	 * @param nextHopThread the thread that made the second hop (a {@code boundedElastic}
	 * one)
	 * @param next the user as the second hop returned it, with the instance that served
	 * it
	 */
	public record NextUser(long id, String name, ServedBy servedBy, Received received, String nextHopThread,
			User next) {
	}

	/**
	 * Who answered the call.
	 *
	 * @param instanceId the instance id
	 * @param host the registered host
	 * @param port the actual port
	 * @param tag the version tag (empty = untagged)
	 * @param cluster the cluster (empty = none)
	 * @param weight the published weight
	 */
	public record ServedBy(String instanceId, String host, int port, String tag, String cluster, double weight) {
	}

	/**
	 * The routing headers an inbound request carried ({@code null} = absent).
	 *
	 * @param version the {@value #VERSION_HEADER} header
	 * @param caller the {@value #CALLER_HEADER} header
	 */
	public record Received(String version, String caller) {
	}

}
