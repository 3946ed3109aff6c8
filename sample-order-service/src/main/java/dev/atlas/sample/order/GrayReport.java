package dev.atlas.sample.order;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.event.EventListener;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestClient;

/**
 * Runs one gray scenario: a burst of calls to this application's own {@code GET
 * /chain/{id}} (two hops) or {@code GET /orders/{id}?client=…} (one hop) over plain HTTP
 * to {@code 127.0.0.1} — not through the balancer — with a given
 * {@code X-Service-Version} header or none, so that the header arrives as an
 * <em>inbound</em> header, as in production. It tallies the tag of the instance that
 * served each hop and checks an expectation.
 */
@Service
public class GrayReport {

	/** The gray header (Atlas's default {@code atlas.gray.header}). */
	public static final String VERSION_HEADER = "X-Service-Version";

	/** Atlas's counter of calls whose wanted tag had no instance. */
	static final String FALLBACK_METER = "atlas.gray.fallback";

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final DiscoveryClient discoveryClient;

	private final ExpectedShares expectedShares;

	private final ObjectProvider<MeterRegistry> meterRegistry;

	private volatile int port;

	/**
	 * @param discoveryClient lists the tags that exist, so that a tag nobody hit shows as
	 * 0 %
	 * @param expectedShares reads the tag metadata key
	 * @param meterRegistry where Atlas counts fallbacks ({@value #FALLBACK_METER})
	 */
	public GrayReport(DiscoveryClient discoveryClient, ExpectedShares expectedShares,
			ObjectProvider<MeterRegistry> meterRegistry) {
		this.discoveryClient = discoveryClient;
		this.expectedShares = expectedShares;
		this.meterRegistry = meterRegistry;
	}

	/**
	 * Remembers the port this application listens on.
	 * @param event the web server's initialization event
	 */
	@EventListener
	public void onWebServerInitialized(WebServerInitializedEvent event) {
		if (event.getApplicationContext().getServerNamespace() == null) {
			this.port = event.getWebServer().getPort();
		}
	}

	/**
	 * Runs a scenario.
	 * @param scenario what to send and what to expect
	 * @return the tag counts per hop and the verdict
	 * @throws InterruptedException if interrupted while waiting for the calls
	 */
	public Result run(Scenario scenario) throws InterruptedException {
		SimpleClientHttpRequestFactory requestFactory = new SimpleClientHttpRequestFactory();
		requestFactory.setConnectTimeout(Duration.ofSeconds(2));
		requestFactory.setReadTimeout(TIMEOUT);
		// a plain client, not the @LoadBalanced one: the header is this app's inbound
		// header
		RestClient http = RestClient.builder()
			.baseUrl("http://127.0.0.1:" + this.port)
			.requestFactory(requestFactory)
			.build();
		boolean chain = scenario.chain();
		List<Map<String, LongAdder>> counts = List.of(new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
		double fallbacksBefore = fallbacks();
		Burst.Failures failures = Burst.run(scenario.calls(), scenario.concurrency(), (i) -> {
			RestClient.RequestHeadersSpec<?> request = chain ? http.get().uri("/chain/{id}", i)
					: http.get().uri("/orders/{id}?client={client}", i, scenario.client().id());
			if (scenario.version() != null) {
				request.header(VERSION_HEADER, scenario.version());
			}
			if (chain) {
				ChainService.Chain answer = request.retrieve().body(ChainService.Chain.class);
				if (answer == null || answer.hop1() == null || answer.hop2() == null) {
					throw new IllegalStateException("incomplete chain: " + answer);
				}
				count(counts.get(0), answer.hop1().tag());
				count(counts.get(1), answer.hop2().tag());
			}
			else {
				OrderController.Order order = request.retrieve().body(OrderController.Order.class);
				if (order == null || order.user() == null || order.user().servedBy() == null) {
					throw new IllegalStateException("order without servedBy: " + order);
				}
				count(counts.get(0), order.user().servedBy().tag());
			}
		});
		TreeSet<String> tags = new TreeSet<>(knownTags());
		counts.forEach((hop) -> tags.addAll(hop.keySet()));
		List<HopTally> hops = new ArrayList<>();
		hops.add(tally(1, chain ? "order-service -> user-service (Feign from @Async)"
				: "order-service -> user-service (" + scenario.client().id() + ")", counts.get(0)));
		if (chain) {
			hops.add(tally(2, "user-service -> user-service (WebClient on boundedElastic)", counts.get(1)));
		}
		return new Result(scenario, failures.count(), failures.first(), List.copyOf(tags), hops,
				Math.round(fallbacks() - fallbacksBefore));
	}

	/**
	 * @return this application's fallbacks so far, for calls to user-service, all
	 * policies
	 */
	private double fallbacks() {
		MeterRegistry registry = this.meterRegistry.getIfUnique();
		if (registry == null) {
			return 0;
		}
		return registry.find(FALLBACK_METER)
			.tag("service", TrafficService.USER_SERVICE)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	private static void count(Map<String, LongAdder> counts, String tag) {
		counts.computeIfAbsent(ExpectedShares.normalize(tag), (key) -> new LongAdder()).increment();
	}

	private static HopTally tally(int hop, String via, Map<String, LongAdder> counts) {
		Map<String, Long> byTag = new TreeMap<>();
		counts.forEach((tag, count) -> byTag.put(tag, count.longValue()));
		return new HopTally(hop, via, byTag);
	}

	private List<String> knownTags() {
		String key = this.expectedShares.tagMetadataKey();
		List<String> tags = new ArrayList<>();
		for (ServiceInstance instance : this.discoveryClient.getInstances(TrafficService.USER_SERVICE)) {
			Map<String, String> metadata = instance.getMetadata();
			tags.add(ExpectedShares.normalize((metadata != null) ? metadata.get(key) : null));
		}
		return tags;
	}

	/**
	 * The table and the verdict, as the demo prints them.
	 * @param result a scenario's result
	 * @return lines ending with {@code RESULT: PASS} or {@code RESULT: FAIL …}
	 */
	static String render(Result result) {
		Scenario scenario = result.scenario();
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "scenario: %s -> GET %s (%d calls, %d failed)%n", scenario.label(),
				scenario.chain() ? "/chain/{id}" : "/orders/{id}?client=" + scenario.client().id(), scenario.calls(),
				result.failures()));
		out.append(String.format(Locale.ROOT, "%-3s  %-58s", "hop", "call"));
		for (String tag : result.tags()) {
			out.append(String.format(Locale.ROOT, "  %9s", tagLabel(tag)));
		}
		out.append('\n');
		for (HopTally hop : result.hops()) {
			out.append(String.format(Locale.ROOT, "%-3d  %-58s", hop.hop(), hop.via()));
			for (String tag : result.tags()) {
				out.append(String.format(Locale.ROOT, "  %7.1f %%", hop.share(tag) * 100));
			}
			out.append('\n');
		}
		if (result.firstError() != null) {
			out.append("first error: ").append(result.firstError()).append('\n');
		}
		out.append(String.format(Locale.ROOT, "fallbacks counted by order-service (%s{service=user-service}): %d%n",
				FALLBACK_METER, result.fallbacks()));
		List<String> problems = result.problems();
		out.append("expected: ").append(scenario.describeExpectation()).append('\n');
		out.append(problems.isEmpty() ? "RESULT: PASS" : "RESULT: FAIL (" + String.join("; ", problems) + ")")
			.append('\n');
		return out.toString();
	}

	/**
	 * @param tag a normalized tag
	 * @return the tag, or {@code -} for untagged
	 */
	static String tagLabel(String tag) {
		return (tag == null || tag.isEmpty()) ? "-" : tag;
	}

	/**
	 * What to send and what to expect.
	 *
	 * @param label a name for the report
	 * @param version the {@value #VERSION_HEADER} header to send, {@code null} for none
	 * @param chain {@code true} for {@code /chain/{id}} (two hops), {@code false} for
	 * {@code /orders/{id}} (one hop through {@code client})
	 * @param client the client of the one-hop path
	 * @param calls how many calls
	 * @param concurrency how many threads send them
	 * @param expectTag every hop of every call must land on this tag ({@code ""} =
	 * untagged), or {@code null} for no such check
	 * @param expectShare hop 1's share of a tag must be within a tolerance, or
	 * {@code null}
	 */
	public record Scenario(String label, @Nullable String version, boolean chain, ClientType client, int calls,
			int concurrency, @Nullable String expectTag, @Nullable ShareExpectation expectShare) {

		String describeExpectation() {
			List<String> parts = new ArrayList<>();
			if (this.expectTag != null) {
				parts.add("every hop on " + tagLabel(this.expectTag));
			}
			if (this.expectShare != null) {
				parts.add(String.format(Locale.ROOT, "hop 1 on %s for %.1f %% ± %.1f points",
						tagLabel(this.expectShare.tag()), this.expectShare.percent(), this.expectShare.tolerance()));
			}
			parts.add("no failed call");
			return String.join(", ", parts);
		}

	}

	/**
	 * A share expectation at hop 1, parsed from {@code tag:percent:tolerance}, e.g.
	 * {@code v2:10:2} (10 % ± 2 percentage points on v2).
	 *
	 * @param tag the tag, normalized
	 * @param percent the expected share in percent
	 * @param tolerance the accepted gap in percentage points
	 */
	public record ShareExpectation(String tag, double percent, double tolerance) {

		/**
		 * @param value {@code tag:percent:tolerance}
		 * @return the expectation
		 * @throws IllegalArgumentException if the value does not have that form
		 */
		public static ShareExpectation parse(String value) {
			String[] parts = value.split(":");
			try {
				if (parts.length == 3) {
					return new ShareExpectation(ExpectedShares.normalize(parts[0]), Double.parseDouble(parts[1]),
							Double.parseDouble(parts[2]));
				}
			}
			catch (NumberFormatException ex) {
				// reported below
			}
			throw new IllegalArgumentException(
					"expect-share must be tag:percent:tolerance, " + "e.g. v2:10:2, was '" + value + "'");
		}

	}

	/**
	 * The calls of one hop, by the tag of the instance that served them.
	 *
	 * @param hop 1 or 2
	 * @param via who called whom, through what
	 * @param counts tag ({@code ""} = untagged) to calls
	 */
	public record HopTally(int hop, String via, Map<String, Long> counts) {

		/**
		 * @return the calls of this hop that succeeded
		 */
		public long total() {
			return this.counts.values().stream().mapToLong(Long::longValue).sum();
		}

		/**
		 * @param tag a normalized tag
		 * @return its share of this hop's calls, 0..1
		 */
		public double share(String tag) {
			long total = total();
			return (total == 0) ? 0 : this.counts.getOrDefault(tag, 0L) / (double) total;
		}

	}

	/**
	 * A scenario's outcome.
	 *
	 * @param scenario what was sent and expected
	 * @param failures calls that failed
	 * @param firstError the first failure, or {@code null}
	 * @param tags every tag seen or discovered, sorted ({@code ""} = untagged)
	 * @param hops the tally of each hop
	 * @param fallbacks how much this application's {@value #FALLBACK_METER} counter for
	 * user-service grew during the scenario (hop 1's fallbacks; hop 2's are
	 * user-service's)
	 */
	public record Result(Scenario scenario, int failures, @Nullable String firstError, List<String> tags,
			List<HopTally> hops, long fallbacks) {

		/**
		 * @return what is wrong, empty when the expectation is met
		 */
		public List<String> problems() {
			List<String> problems = new ArrayList<>();
			if (this.failures > 0) {
				problems.add(this.failures + " failed call(s)");
			}
			if (this.hops.isEmpty() || this.hops.get(0).total() == 0) {
				problems.add("no successful call");
				return problems;
			}
			if (this.scenario.expectTag() != null) {
				for (HopTally hop : this.hops) {
					long off = hop.total() - hop.counts().getOrDefault(this.scenario.expectTag(), 0L);
					if (off > 0) {
						problems.add(String.format(Locale.ROOT, "hop %d: %d call(s) not on %s", hop.hop(), off,
								tagLabel(this.scenario.expectTag())));
					}
				}
			}
			ShareExpectation share = this.scenario.expectShare();
			if (share != null) {
				double observed = this.hops.get(0).share(share.tag()) * 100;
				if (Math.abs(observed - share.percent()) > share.tolerance()) {
					problems.add(String.format(Locale.ROOT, "hop 1: %.1f %% on %s, expected %.1f %% ± %.1f", observed,
							tagLabel(share.tag()), share.percent(), share.tolerance()));
				}
			}
			return problems;
		}

	}

}
