package dev.atlas.sample.order;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.stereotype.Service;

/**
 * Sends a burst of calls to {@code user-service} through one client and counts which
 * instance served each, next to the share each instance's weight entitles it to.
 */
@Service
public class TrafficService {

    /** The service the sample calls. */
    public static final String USER_SERVICE = "user-service";

    /** The largest burst accepted. */
    public static final int MAX_CALLS = 100_000;

    /** The most worker threads accepted. */
    public static final int MAX_CONCURRENCY = 64;

    private final UserCalls userCalls;

    private final DiscoveryClient discoveryClient;

    /**
     * @param userCalls the calls to user-service
     * @param discoveryClient lists the instances that got no call too
     */
    public TrafficService(UserCalls userCalls, DiscoveryClient discoveryClient) {
        this.userCalls = userCalls;
        this.discoveryClient = discoveryClient;
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
        if (calls < 1 || calls > MAX_CALLS) {
            throw new IllegalArgumentException("calls must be 1.." + MAX_CALLS + ", was " + calls);
        }
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException(
                    "concurrency must be 1.." + MAX_CONCURRENCY + ", was " + concurrency);
        }
        Map<String, LongAdder> counts = new ConcurrentHashMap<>();
        Map<String, User.ServedBy> servedBy = new ConcurrentHashMap<>();
        LongAdder failures = new LongAdder();
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicInteger next = new AtomicInteger();

        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
                try {
                    User user = userCalls.user(client, i);
                    User.ServedBy by = (user != null) ? user.servedBy() : null;
                    if (by == null) {
                        throw new IllegalStateException("response without servedBy: " + user);
                    }
                    counts.computeIfAbsent(by.address(), key -> new LongAdder()).increment();
                    servedBy.putIfAbsent(by.address(), by);
                }
                catch (RuntimeException ex) {
                    failures.increment();
                    firstError.compareAndSet(null, ex.toString());
                }
            }
        };
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < concurrency; t++) {
                futures.add(pool.submit(worker));
            }
            for (Future<?> future : futures) {
                try {
                    future.get();
                }
                catch (java.util.concurrent.ExecutionException ex) {
                    throw new IllegalStateException(ex.getCause());
                }
            }
        }
        finally {
            pool.shutdownNow();
        }
        return tally(client, calls, failures.intValue(), firstError.get(), counts, servedBy);
    }

    private Traffic tally(ClientType client, int calls, int failures, String firstError,
            Map<String, LongAdder> counts, Map<String, User.ServedBy> servedBy) {
        // every instance: those that answered, and those discovered that got no call
        Map<String, InstanceShare> rows = new LinkedHashMap<>();
        servedBy.forEach((address, by) -> rows.put(address, new InstanceShare(by.instanceId(),
                by.host(), by.port(), by.weight(), counts.get(address).longValue(), 0, 0)));
        for (ServiceInstance instance : discoveryClient.getInstances(USER_SERVICE)) {
            String address = instance.getHost() + ":" + instance.getPort();
            rows.putIfAbsent(address, new InstanceShare(instance.getInstanceId(),
                    instance.getHost(), instance.getPort(), weightOf(instance), 0, 0, 0));
        }
        double weightSum = rows.values().stream().mapToDouble(InstanceShare::weight).sum();
        long successes = calls - failures;
        List<InstanceShare> instances = rows.values().stream()
                .map(row -> new InstanceShare(row.instanceId(), row.host(), row.port(),
                        row.weight(), row.count(), weightSum > 0 ? row.weight() / weightSum : 0,
                        successes > 0 ? (double) row.count() / successes : 0))
                .sorted(Comparator.comparing(InstanceShare::host)
                        .thenComparingInt(InstanceShare::port))
                .toList();
        return new Traffic(client.id(), calls, failures, firstError, instances);
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
     * @param client the client used
     * @param calls the calls sent
     * @param failures the calls that failed
     * @param firstError the first failure, or {@code null}
     * @param instances every instance that answered or is discovered, by host and port
     */
    public record Traffic(String client, int calls, int failures, String firstError,
            List<InstanceShare> instances) {
    }

    /**
     * One instance's part of a burst.
     * @param instanceId its instance id
     * @param host its host
     * @param port its port
     * @param weight its published weight
     * @param count the calls it served
     * @param expectedShare its weight over the sum of weights, 0..1
     * @param observedShare its calls over the successful calls, 0..1
     */
    public record InstanceShare(String instanceId, String host, int port, double weight,
            long count, double expectedShare, double observedShare) {
    }

}
