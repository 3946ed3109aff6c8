package dev.atlas.loadbalancer.pipeline;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The Reactive Streams behaviour of {@link FirstListChoice}, through
 * {@link AtlasLoadBalancer#choose}.
 */
class FirstListChoiceTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final ServiceInstance a = weighted("A", "1");

	private final ServiceInstance b = weighted("B", "1");

	private AtlasLoadBalancer over(Flux<List<ServiceInstance>> lists) {
		ServiceInstanceListSupplier supplier = new ServiceInstanceListSupplier() {

			@Override
			public String getServiceId() {
				return SERVICE;
			}

			@Override
			public Flux<List<ServiceInstance>> get() {
				return lists;
			}

		};
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", supplier);
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		return TestStages
			.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
					new WeightedRandomBalancer(
							new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters)),
					parser);
	}

	@Test
	void choosesFromTheFirstListAndCancelsTheRest() {
		AtomicBoolean cancelled = new AtomicBoolean();
		AtomicInteger emitted = new AtomicInteger();
		Flux<List<ServiceInstance>> lists = Flux.just(List.of(this.a), List.of(this.b), List.of(this.b))
			.doOnNext((list) -> emitted.incrementAndGet())
			.doOnCancel(() -> cancelled.set(true));
		Response<ServiceInstance> response = over(lists).choose(new DefaultRequest<>()).block();
		assertThat(response.getServer()).isSameAs(this.a);
		assertThat(emitted).hasValue(1);
		assertThat(cancelled).isTrue();
	}

	@Test
	void anErrorOfTheChainPassesThrough() {
		AtlasLoadBalancer loadBalancer = over(Flux.error(new IllegalStateException("registry down")));
		assertThatIllegalStateException().isThrownBy(() -> loadBalancer.choose(new DefaultRequest<>()).block())
			.withMessage("registry down");
	}

	@Test
	void waitsForDemandBeforeEmittingAndEmitsExactlyOnce() {
		Recorder recorder = new Recorder();
		over(Flux.just(List.of(this.a))).choose(new DefaultRequest<>()).subscribe(recorder);
		assertThat(recorder.values).as("nothing requested yet").isEmpty();
		recorder.request(1);
		assertThat(recorder.values).hasSize(1);
		assertThat(recorder.values.get(0).getServer()).isSameAs(this.a);
		assertThat(recorder.completed).isTrue();
	}

	@Test
	void cancellingBeforeTheListArrivesCancelsTheChain() {
		AtomicBoolean cancelled = new AtomicBoolean();
		Sinks.Many<List<ServiceInstance>> registry = Sinks.many().unicast().onBackpressureBuffer();
		Recorder recorder = new Recorder();
		over(registry.asFlux().doOnCancel(() -> cancelled.set(true))).choose(new DefaultRequest<>())
			.subscribe(recorder);
		recorder.request(1);
		recorder.cancel();
		assertThat(cancelled).isTrue();
		assertThat(recorder.values).isEmpty();
	}

	@Test
	void anExceptionWhileChoosingIsSignalledAsAnError() {
		List<ServiceInstance> broken = new AbstractList<>() {

			@Override
			public ServiceInstance get(int index) {
				throw new IllegalStateException("broken list");
			}

			@Override
			public int size() {
				return 1;
			}

		};
		AtlasLoadBalancer loadBalancer = over(Flux.just(broken));
		assertThatIllegalStateException().isThrownBy(() -> loadBalancer.choose(new DefaultRequest<>()).block())
			.withMessage("broken list");
	}

	/** Requests nothing until told to. */
	static final class Recorder extends BaseSubscriber<Response<ServiceInstance>> {

		final List<Response<ServiceInstance>> values = new ArrayList<>();

		boolean completed;

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
		}

		@Override
		protected void hookOnNext(Response<ServiceInstance> value) {
			this.values.add(value);
		}

		@Override
		protected void hookOnComplete() {
			this.completed = true;
		}

	}

}
