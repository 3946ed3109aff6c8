package dev.atlas.loadbalancer.instance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
	void case10_emptyRefreshKeepsTheLastListMarkedStaleAndRecovers() {
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
	void case10_scaleToZeroIsAcceptedOnceTheStaleLimitPasses() {
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

}
