package dev.atlas.sample.order;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.stereotype.Service;

/**
 * Sends a burst of untagged calls to {@code user-service} through one client and counts
 * which instance served each, next to the share each instance should get: its weight's
 * share of the lane untagged traffic can reach ({@link ExpectedShares}), so canary
 * instances that baseline traffic never reaches are expected at 0 %.
 */
@Service
public class TrafficService {

	/** The service the sample calls. */
	public static final String USER_SERVICE = "user-service";

	/** The largest burst accepted. */
	public static final int MAX_CALLS = Burst.MAX_CALLS;

	/** The most worker threads accepted. */
	public static final int MAX_CONCURRENCY = Burst.MAX_CONCURRENCY;

	private final UserCalls userCalls;

	private final DiscoveryClient discoveryClient;

	private final ExpectedShares expectedShares;

	/**
	 * @param userCalls the calls to user-service
	 * @param discoveryClient lists the instances that got no call too
	 * @param expectedShares what share each instance should get
	 */
	public TrafficService(UserCalls userCalls, DiscoveryClient discoveryClient, ExpectedShares expectedShares) {
		this.userCalls = userCalls;
		this.discoveryClient = discoveryClient;
		this.expectedShares = expectedShares;
	}

	/**
	 * Sends {@code calls} calls with {@code concurrency} threads and tallies the outcome.
	 * @param client the client to call through
	 * @param calls how many calls, 1..{@value #MAX_CALLS}
	 * @param concurrency how many threads, 1..{@value #MAX_CONCURRENCY}
	 * @return per-instance counts and shares
	 * @throws InterruptedException if interrupted while waiting for the calls
	 */
	public Traffic send(ClientType client, int calls, int concurrency) throws InterruptedException {
		Map<String, LongAdder> counts = new ConcurrentHashMap<>();
		Map<String, User.ServedBy> servedBy = new ConcurrentHashMap<>();
		Burst.Failures failures = Burst.run(calls, concurrency, (i) -> {
			User user = this.userCalls.user(client, i);
			User.ServedBy by = (user != null) ? user.servedBy() : null;
			if (by == null) {
				throw new IllegalStateException("response without servedBy: " + user);
			}
			counts.computeIfAbsent(by.address(), (key) -> new LongAdder()).increment();
			servedBy.putIfAbsent(by.address(), by);
		});
		return tally(client, calls, failures, counts, servedBy);
	}

	private Traffic tally(ClientType client, int calls, Burst.Failures failures, Map<String, LongAdder> counts,
			Map<String, User.ServedBy> servedBy) {
		// every instance: those that answered, and those discovered that got no call
		Map<String, InstanceShare> rows = new LinkedHashMap<>();
		servedBy.forEach((address, by) -> rows.put(address,
				new InstanceShare(by.instanceId(), by.host(), by.port(), ExpectedShares.normalize(by.tag()),
						by.weight(), Objects.requireNonNull(counts.get(address), "counted with servedBy").longValue(),
						0, 0)));
		String tagKey = this.expectedShares.tagMetadataKey();
		for (ServiceInstance instance : this.discoveryClient.getInstances(USER_SERVICE)) {
			String address = instance.getHost() + ":" + instance.getPort();
			String tag = (instance.getMetadata() != null) ? instance.getMetadata().get(tagKey) : null;
			rows.putIfAbsent(address, new InstanceShare(instance.getInstanceId(), instance.getHost(),
					instance.getPort(), ExpectedShares.normalize(tag), weightOf(instance), 0, 0, 0));
		}
		Map<String, Double> expected = this.expectedShares.untagged(USER_SERVICE,
				rows.values()
					.stream()
					.map((row) -> new ExpectedShares.Candidate(row.host() + ":" + row.port(), row.tag(), row.weight()))
					.toList());
		long successes = calls - failures.count();
		List<InstanceShare> instances = rows.values()
			.stream()
			.map((row) -> new InstanceShare(row.instanceId(), row.host(), row.port(), row.tag(), row.weight(),
					row.count(), expected.getOrDefault(row.host() + ":" + row.port(), 0.0),
					(successes > 0) ? (double) row.count() / successes : 0))
			.sorted(Comparator.comparing(InstanceShare::host).thenComparingInt(InstanceShare::port))
			.toList();
		return new Traffic(client.id(), calls, failures.count(), failures.first(), instances);
	}

	/**
	 * The weight an instance publishes: metadata {@code nacos.weight} or {@code weight};
	 * 1 when absent or unreadable, 0 when negative.
	 */
	static double weightOf(ServiceInstance instance) {
		Map<String, String> metadata = instance.getMetadata();
		if (metadata == null) {
			return 1;
		}
		String value = metadata.getOrDefault("nacos.weight", metadata.get("weight"));
		if (value == null || value.isBlank()) {
			return 1;
		}
		try {
			return Math.max(0, Double.parseDouble(value.trim()));
		}
		catch (NumberFormatException ex) {
			return 1;
		}
	}

	/**
	 * The outcome of a burst.
	 *
	 * @param client the client used
	 * @param calls the calls sent
	 * @param failures the calls that failed
	 * @param firstError the first failure, or {@code null}
	 * @param instances every instance that answered or is discovered, by host and port
	 */
	public record Traffic(String client, int calls, int failures, @Nullable String firstError,
			List<InstanceShare> instances) {
	}

	/**
	 * One instance's part of a burst.
	 *
	 * @param instanceId its instance id
	 * @param host its host
	 * @param port its port
	 * @param tag its version tag, lower-cased ({@code ""} = untagged)
	 * @param weight its published weight
	 * @param count the calls it served
	 * @param expectedShare the share of untagged calls it should get, 0..1 (its weight's
	 * share of the lane untagged calls can reach; 0 for an instance outside it)
	 * @param observedShare its calls over the successful calls, 0..1
	 */
	public record InstanceShare(@Nullable String instanceId, String host, int port, String tag, double weight,
			long count, double expectedShare, double observedShare) {
	}

}
