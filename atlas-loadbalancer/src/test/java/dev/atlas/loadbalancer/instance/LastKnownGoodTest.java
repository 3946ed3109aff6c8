package dev.atlas.loadbalancer.instance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.atlas.loadbalancer.ManualScheduler;
import dev.atlas.loadbalancer.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;

class LastKnownGoodTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final MutableClock clock = new MutableClock(0);

	private final LastKnownGood lkg = new LastKnownGood(SERVICE, Duration.ofSeconds(60), this.clock, this.meters);

	private double stale() {
		return this.meters.counter("atlas.registry.stale", "service", SERVICE).count();
	}

	@Test
	void emptyRefreshKeepsTheLastListMarkedStaleAndRecovers() {
		List<ServiceInstance> ab = List.of(instance("A"), instance("B"));
		assertThat(this.lkg.apply(ab)).isSameAs(ab);
		List<ServiceInstance> outage = new ArrayList<>();
		assertThat(this.lkg.apply(outage)).isSameAs(ab);
		assertThat(this.lkg.apply(outage)).as("same empty answer again: counted once").isSameAs(ab);
		assertThat(this.lkg.isStale()).isTrue();
		assertThat(stale()).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(this.lkg.apply(new ArrayList<>())).isSameAs(ab);
		assertThat(stale()).isEqualTo(2);
		List<ServiceInstance> recovered = List.of(instance("A"), instance("C"));
		assertThat(this.lkg.apply(recovered)).isSameAs(recovered);
		assertThat(this.lkg.isStale()).isFalse();
	}

	@Test
	void scaleToZeroIsAcceptedOnceTheStaleLimitPasses() {
		List<ServiceInstance> ab = List.of(instance("A"), instance("B"));
		this.lkg.apply(ab);
		// A deregisters, then B: the list shrinks, then empties.
		List<ServiceInstance> b = List.of(instance("B"));
		assertThat(this.lkg.apply(b)).isSameAs(b);
		List<ServiceInstance> none = List.of();
		assertThat(this.lkg.apply(none)).isSameAs(b);
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(this.lkg.apply(none)).isSameAs(b);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.lkg.apply(none)).isEmpty();
		assertThat(this.lkg.apply(none)).isEmpty();
		assertThat(this.lkg.isStale()).isFalse();
	}

	@Test
	void emptyBeforeAnyGoodListIsPassedThrough() {
		assertThat(this.lkg.apply(List.of())).isEmpty();
		assertThat(stale()).isZero();
	}

	@Test
	void anEmptyAnswerThatTheRegistrysViewConfirmsIsTheTruthAndAcceptedAtOnce() {
		// One instance, seen; it deregisters: the registry's watch holds no node any
		// more.
		boolean[] registryEmpty = { false };
		this.lkg.confirmEmpty(() -> registryEmpty[0]);
		List<ServiceInstance> a = List.of(instance("A"));
		assertThat(this.lkg.apply(a)).isSameAs(a);
		registryEmpty[0] = true;
		List<ServiceInstance> none = new ArrayList<>();
		assertThat(this.lkg.apply(none)).as("never the old address").isEmpty();
		assertThat(this.lkg.apply(new ArrayList<>())).isEmpty();
		assertThat(this.lkg.isStale()).isFalse();
		assertThat(stale()).isZero();
		List<ServiceInstance> replacement = List.of(instance("A2"));
		assertThat(this.lkg.apply(replacement)).isSameAs(replacement);
	}

	@Test
	void anOutageTheRegistrysViewDoesNotConfirmKeepsTheListEvenAfterChangeEvents() {
		// The watch still holds the instances (a lost connection does not delete them):
		// a failed query's empty answer is an outage, whatever events came before.
		int[] asked = { 0 };
		this.lkg.confirmEmpty(() -> {
			asked[0]++;
			return false;
		});
		List<ServiceInstance> ab = List.of(instance("A"), instance("B"));
		this.lkg.apply(ab);
		List<ServiceInstance> failedQuery = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			assertThat(this.lkg.apply(failedQuery)).isSameAs(ab);
		}
		assertThat(asked[0]).as("asked once per new empty answer, not per request").isOne();
		this.clock.advance(Duration.ofSeconds(1));
		this.lkg.apply(failedQuery);
		assertThat(asked[0]).as("the same answer object again after a second").isEqualTo(2);
		this.lkg.apply(new ArrayList<>());
		assertThat(asked[0]).isEqualTo(3);
		assertThat(this.lkg.isStale()).isTrue();
	}

	@Test
	void aBrokenConfirmationKeepsTheList() {
		this.lkg.confirmEmpty(() -> {
			throw new IllegalStateException("registry client closed");
		});
		List<ServiceInstance> a = List.of(instance("A"));
		this.lkg.apply(a);
		assertThat(this.lkg.apply(new ArrayList<>())).isSameAs(a);
	}

	@Test
	void anUnconfirmedEmptyAnswerKeepsTheListConnectChecked() {
		ManualScheduler scheduler = new ManualScheduler(this.clock);
		Set<String> refusing = new HashSet<>(Set.of("B"));
		LastKnownGood checked = new LastKnownGood(SERVICE, Duration.ofSeconds(60), this.clock, this.meters,
				new LastKnownGood.StaleCheck((i) -> !refusing.contains(i.getInstanceId()), scheduler,
						Duration.ofSeconds(5)));
		List<ServiceInstance> ab = List.of(instance("A"), instance("B"));
		checked.apply(ab);
		// e.g. Nacos resubscribing after a server restart: an empty push before providers
		// register again; or a registry outage
		List<ServiceInstance> none = new ArrayList<>();
		assertThat(checked.apply(none)).as("until the first check has run").isSameAs(ab);
		assertThat(scheduler.pending()).as("one check task per instance").isEqualTo(2);
		scheduler.runDue();
		assertThat(checked.apply(none)).extracting(ServiceInstance::getInstanceId).containsExactly("A");
		List<ServiceInstance> first = checked.apply(none);
		assertThat(checked.apply(none)).as("the same list object until the next check").isSameAs(first);
		assertThat(scheduler.pending()).as("no new check within the interval").isZero();
		this.clock.advance(Duration.ofSeconds(5));
		refusing.add("A");
		checked.apply(none);
		scheduler.runDue();
		assertThat(checked.apply(none)).as("every instance refuses: the empty answer").isEmpty();
		refusing.clear();
		List<ServiceInstance> back = List.of(instance("A"), instance("C"));
		assertThat(checked.apply(back)).isSameAs(back);
		assertThat(checked.isStale()).isFalse();
	}

	@Test
	void aStaleListWhoseInstancesAllAnswerIsKeptAsTheSameObject() {
		ManualScheduler scheduler = new ManualScheduler(this.clock);
		LastKnownGood checked = new LastKnownGood(SERVICE, Duration.ofSeconds(60), this.clock, this.meters,
				new LastKnownGood.StaleCheck((i) -> true, scheduler, Duration.ofSeconds(5)));
		List<ServiceInstance> ab = List.of(instance("A"), instance("B"));
		checked.apply(ab);
		checked.apply(new ArrayList<>());
		scheduler.runDue();
		assertThat(checked.apply(new ArrayList<>())).isSameAs(ab);
	}

}
