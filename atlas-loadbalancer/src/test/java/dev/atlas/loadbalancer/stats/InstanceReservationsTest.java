package dev.atlas.loadbalancer.stats;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.fleet;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Slots reserved at the pick under a per-instance in-flight limit: counted in flight at
 * once, claimed by the request's start, expired when no start comes.
 */
class InstanceReservationsTest {

	private final AtomicLong now = new AtomicLong();

	private final InstanceStats stats = new InstanceStats(Duration.ofSeconds(10), this.now::get);

	private final InstanceSnapshot fleet = InstanceSnapshot.of(fleet(2),
			new InstanceAttributesParser(SERVICE, "version", new SimpleMeterRegistry()));

	private final ServiceInstance first = this.fleet.get(0);

	@Test
	void aReservedSlotIsInFlightAtOnceAndItsStartDoesNotCountItAgain() {
		assertThat(this.stats.tryReserve(this.fleet, 0, 2)).isTrue();
		assertThat(this.stats.inFlight(this.first)).isEqualTo(1);
		assertThat(this.stats.inFlightTotal()).isEqualTo(1);
		this.stats.started(this.first);
		assertThat(this.stats.inFlight(this.first)).isEqualTo(1);
		assertThat(this.stats.requests(this.first)).isEqualTo(1);
		this.stats.completed(this.first, 1_000_000);
		assertThat(this.stats.inFlight(this.first)).isZero();
		assertThat(this.stats.inFlightTotal()).isZero();
	}

	@Test
	void anInstanceAtTheLimitIsRefusedWhateverHoldsItsSlots() {
		assertThat(this.stats.tryReserve(this.fleet, 0, 2)).isTrue();
		this.stats.started(this.first);
		// a start without a pick (an instance chosen by hand, then called) counts too
		this.stats.started(this.first);
		assertThat(this.stats.tryReserve(this.fleet, 0, 2)).isFalse();
		assertThat(this.stats.tryReserve(this.fleet, 1, 2)).as("the other instance").isTrue();
		this.stats.completed(this.first, 1_000_000);
		assertThat(this.stats.tryReserve(this.fleet, 0, 2)).isTrue();
	}

	@Test
	void aSlotNoStartClaimsExpiresAfterOneToTwoLeases() {
		long lease = InstanceStats.RESERVATION_LEASE.toNanos();
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).isTrue();
		this.now.addAndGet(lease - 1);
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).as("within its lease").isFalse();
		this.now.addAndGet(1);
		// the first period ends: the slot becomes old, still held
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).isFalse();
		this.now.addAndGet(lease);
		// the second ends: never claimed, it expires, and the pick that found it gets it
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).isTrue();
		assertThat(this.stats.expiredReservations()).isEqualTo(1);
		assertThat(this.stats.inFlight(this.first)).isEqualTo(1);
		assertThat(this.stats.inFlightTotal()).isEqualTo(1);
	}

	@Test
	void aSlotLeftOverAnIdlePeriodExpiresAtTheFirstLookAfterIt() {
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).isTrue();
		this.now.addAndGet(10 * InstanceStats.RESERVATION_LEASE.toNanos());
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).as("10 leases later").isTrue();
		assertThat(this.stats.expiredReservations()).isEqualTo(1);
	}

	@Test
	void aClaimedSlotNeverExpires() {
		long lease = InstanceStats.RESERVATION_LEASE.toNanos();
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).isTrue();
		this.stats.started(this.first);
		this.now.addAndGet(3 * lease);
		assertThat(this.stats.tryReserve(this.fleet, 0, 1)).as("its request is still in flight").isFalse();
		assertThat(this.stats.expiredReservations()).isZero();
		this.stats.completed(this.first, 1_000_000);
		assertThat(this.stats.inFlight(this.first)).isZero();
	}

	@Test
	void concurrentPicksNeverTakeAnInstanceOverTheLimit() throws InterruptedException {
		InstanceStats shared = new InstanceStats();
		int max = 3;
		int threads = 8;
		AtomicIntegerArray atProvider = new AtomicIntegerArray(2);
		AtomicInteger worst = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		for (int t = 0; t < threads; t++) {
			pool.execute(() -> {
				await(start);
				for (int i = 0; i < 20_000; i++) {
					int position = i & 1;
					if (!shared.tryReserve(this.fleet, position, max)) {
						continue;
					}
					ServiceInstance instance = this.fleet.get(position);
					shared.started(instance);
					// what the provider sees in flight from this caller
					worst.accumulateAndGet(atProvider.incrementAndGet(position), Math::max);
					atProvider.decrementAndGet(position);
					shared.completed(instance, 1000);
				}
			});
		}
		start.countDown();
		pool.shutdown();
		assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
		assertThat(worst.get()).isBetween(1, max);
		assertThat(shared.inFlightTotal()).isZero();
		assertThat(List.of(shared.inFlight(this.fleet.get(0)), shared.inFlight(this.fleet.get(1)))).containsOnly(0L);
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
