package dev.atlas.loadbalancer.pipeline;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import dev.atlas.loadbalancer.TestInstances;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Waiting for a choice on the calling thread ({@link AtlasLoadBalancer#chooseAndWait})
 * gives what {@code choose(request).block()} gives: the response, at once or when the
 * list arrives; the error; the empty response for a chain without a list; and the calling
 * thread's routing context in the subscriber's context. It does not wait on an event
 * loop, and an interrupted wait cancels the chain.
 */
class AwaitedChoiceTest {

	private static final ServiceInstance A = weighted("A", "1");

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	@AfterEach
	void clear() {
		RoutingContextHolder.clear();
	}

	private AtlasLoadBalancer loadBalancer(Supplier<Flux<List<ServiceInstance>>> lists) {
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", new ServiceInstanceListSupplier() {

			@Override
			public String getServiceId() {
				return SERVICE;
			}

			@Override
			public Flux<List<ServiceInstance>> get() {
				return lists.get();
			}

		});
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		return TestStages
			.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
					new WeightedRandomBalancer(
							new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters)),
					parser);
	}

	@Test
	void aListAtHandIsChosenFromWithoutWaiting() {
		AtlasLoadBalancer loadBalancer = loadBalancer(() -> Flux.just(List.of(A)));

		Response<ServiceInstance> response = loadBalancer.chooseAndWait(new DefaultRequest<>());

		assertThat(response.getServer()).isSameAs(A);
	}

	@Test
	void aListThatArrivesOnAnotherThreadIsWaitedFor() {
		AtomicReference<String> emittedOn = new AtomicReference<>();
		AtlasLoadBalancer loadBalancer = loadBalancer(() -> Flux.just(List.of(A))
			.delayElements(Duration.ofMillis(50))
			.doOnNext((list) -> emittedOn.set(Thread.currentThread().getName())));

		Response<ServiceInstance> response = loadBalancer.chooseAndWait(new DefaultRequest<>());

		assertThat(response.getServer()).isSameAs(A);
		assertThat(emittedOn.get()).isNotEqualTo(Thread.currentThread().getName());
	}

	@Test
	void anErrorOfTheChainIsThrown() {
		AtlasLoadBalancer loadBalancer = loadBalancer(() -> Flux.error(new IllegalStateException("chain failed")));

		assertThatIllegalStateException().isThrownBy(() -> loadBalancer.chooseAndWait(new DefaultRequest<>()))
			.withMessage("chain failed");
	}

	@Test
	void aChainWithoutAListGivesTheEmptyResponseThatChooseGives() {
		AtlasLoadBalancer loadBalancer = loadBalancer(Flux::empty);

		Response<ServiceInstance> awaited = loadBalancer.chooseAndWait(new DefaultRequest<>());
		Response<ServiceInstance> blocked = loadBalancer.choose(new DefaultRequest<>()).block();

		assertThat(awaited).isInstanceOf(NoInstanceResponse.class).isSameAs(blocked);
		assertThat(((NoInstanceResponse) awaited).reason()).isEqualTo(NoInstanceReason.NO_INSTANCES);
	}

	@Test
	void theCallingThreadsRoutingContextIsInTheSubscribersContext() {
		RoutingContext routing = RoutingContext.of(Map.of("x-service-version", "v2"));
		RoutingContextHolder.set(routing);
		Object[] seen = new Object[1];
		AtlasLoadBalancer loadBalancer = loadBalancer(() -> Flux.deferContextual((context) -> {
			seen[0] = context.getOrDefault(RoutingContextHolder.KEY, null);
			return Flux.just(List.of(A));
		}).delayElements(Duration.ofMillis(10)));

		loadBalancer.chooseAndWait(new DefaultRequest<>());

		assertThat(seen[0]).isSameAs(routing);
	}

	@Test
	void aListPublishedOnAnotherThreadBeforeSubscribeReturnsIsNotWaitedFor() {
		AtlasLoadBalancer loadBalancer = loadBalancer(() -> Flux.create((sink) -> {
			Thread publisher = new Thread(() -> sink.next(List.of(A)));
			publisher.start();
			try {
				publisher.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}));

		Response<ServiceInstance> response = loadBalancer.chooseAndWait(new DefaultRequest<>());

		assertThat(response.getServer()).isSameAs(A);
	}

	@Test
	void aListThatArrivesAfterTheCallerGaveUpIsNotChosenFrom() throws InterruptedException {
		// a chain that does not stop at the cancel: its list is already on its way
		AtomicReference<Subscriber<? super List<ServiceInstance>>> subscribed = new AtomicReference<>();
		AtomicBoolean cancelled = new AtomicBoolean();
		Publisher<List<ServiceInstance>> late = (subscriber) -> {
			subscribed.set(subscriber);
			subscriber.onSubscribe(new Subscription() {

				@Override
				public void request(long n) {
				}

				@Override
				public void cancel() {
					cancelled.set(true);
				}

			});
		};
		Recorded recorded = new Recorded(late);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", recorded);
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		AtlasLoadBalancer loadBalancer = TestStages
			.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
					new WeightedRandomBalancer(
							new StrategySettings(SERVICE, parser, AllZeroWeightsPolicy.FAIL_OPEN, this.meters)),
					parser);
		Thread.currentThread().interrupt();
		try {
			assertThatThrownBy(() -> loadBalancer.chooseAndWait(new DefaultRequest<>()))
				.hasCauseInstanceOf(InterruptedException.class);
		}
		finally {
			Thread.interrupted();
		}
		Thread publisher = new Thread(() -> subscribed.get().onNext(List.of(A)));
		publisher.start();
		publisher.join();

		assertThat(cancelled).isTrue();
		assertThat(recorded.selected).isEmpty();
	}

	@Test
	void theCallingThreadsRoutingContextChoosesTheLane() {
		ServiceInstance v1 = TestInstances.instance("v1", "version", "v1");
		ServiceInstance v2 = TestInstances.instance("v2", "version", "v2");
		AtlasLoadBalancer loadBalancer = TestStages.graySmoothRoundRobin(SERVICE, List.of(v1, v2), this.meters);
		RoutingContextHolder.set(RoutingContext.of(Map.of("X-Service-Version", "v2")));

		for (int i = 0; i < 10; i++) {
			assertThat(loadBalancer.chooseAndWait(TestStages.request(null)).getServer()).isSameAs(v2);
		}
		RoutingContextHolder.clear();
		assertThat(loadBalancer.chooseAndWait(TestStages.request("v2")).getServer()).isSameAs(v2);
	}

	@Test
	void aSubclassThatOverridesChooseIsWaitedForThroughIt() {
		ServiceInstance other = weighted("B", "1");
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", new Recorded(Flux.just(List.of(A))));
		AtlasLoadBalancer overriding = new AtlasLoadBalancer(SERVICE,
				beans.getBeanProvider(ServiceInstanceListSupplier.class),
				TestStages
					.loadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class),
							new WeightedRandomBalancer(new StrategySettings(SERVICE,
									new InstanceAttributesParser(SERVICE, "version", this.meters),
									AllZeroWeightsPolicy.FAIL_OPEN, this.meters)),
							new InstanceAttributesParser(SERVICE, "version", this.meters))
					.pipeline(),
				LiveStats.NONE) {

			@Override
			@SuppressWarnings({ "rawtypes", "unchecked" })
			public Mono<Response<ServiceInstance>> choose(Request request) {
				return Mono.just(new DefaultResponse(other));
			}

		};

		assertThat(overriding.chooseAndWait(new DefaultRequest<>()).getServer()).isSameAs(other);
	}

	@Test
	void itDoesNotWaitOnAnEventLoopAndCancelsTheChain() {
		AtomicBoolean cancelled = new AtomicBoolean();
		AtlasLoadBalancer loadBalancer = loadBalancer(
				() -> Flux.<List<ServiceInstance>>never().doOnCancel(() -> cancelled.set(true)));

		Mono<Response<ServiceInstance>> onEventLoop = Mono
			.fromCallable(() -> loadBalancer.chooseAndWait(new DefaultRequest<>()))
			.subscribeOn(Schedulers.parallel());

		assertThatThrownBy(onEventLoop::block).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("not supported in thread parallel-");
		assertThat(cancelled).isTrue();
	}

	@Test
	void anInterruptedWaitCancelsTheChainAndKeepsTheInterrupt() {
		AtomicBoolean cancelled = new AtomicBoolean();
		AtlasLoadBalancer loadBalancer = loadBalancer(
				() -> Flux.<List<ServiceInstance>>never().doOnCancel(() -> cancelled.set(true)));
		Thread.currentThread().interrupt();
		try {
			assertThatThrownBy(() -> loadBalancer.chooseAndWait(new DefaultRequest<>()))
				.hasCauseInstanceOf(InterruptedException.class);
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(cancelled).isTrue();
	}

	/** Emits what a publisher emits, and records the instances it is told were chosen. */
	static final class Recorded implements ServiceInstanceListSupplier, SelectedInstanceCallback {

		final List<ServiceInstance> selected = new CopyOnWriteArrayList<>();

		private final Publisher<List<ServiceInstance>> lists;

		Recorded(Publisher<List<ServiceInstance>> lists) {
			this.lists = lists;
		}

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return Flux.from(this.lists);
		}

		@Override
		public void selectedServiceInstance(ServiceInstance serviceInstance) {
			this.selected.add(serviceInstance);
		}

	}

}
