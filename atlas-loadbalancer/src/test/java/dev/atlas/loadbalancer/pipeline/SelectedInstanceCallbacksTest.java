package dev.atlas.loadbalancer.pipeline;

import java.util.ArrayList;
import java.util.List;

import dev.atlas.loadbalancer.spi.LiveStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chosen instance reaches the supplier that wants it, as when the top of the chain is
 * told and every delegating supplier passes it on, whichever way the choice is made.
 */
class SelectedInstanceCallbacksTest {

	private static final ServiceInstance A = weighted("A", "1");

	@Test
	void aCallbackBelowSuppliersThatOnlyPassItOnIsToldDirectly() {
		Recording bottom = new Recording();
		ServiceInstanceListSupplier top = new PassingOn(new PassingOn(bottom));

		assertThat(SelectedInstanceCallbacks.told(top)).isSameAs(bottom);
	}

	@Test
	void aDelegatingSupplierThatDoesSomethingWithTheChoiceIsToldItself() {
		Recording bottom = new Recording();
		Intercepting middle = new Intercepting(bottom);

		assertThat(SelectedInstanceCallbacks.told(new PassingOn(middle))).isSameAs(middle);
	}

	@Test
	void aCallbackOnTopThatIsNotDelegatingIsToldItself() {
		Recording top = new Recording();

		assertThat(SelectedInstanceCallbacks.told(top)).isSameAs(top);
	}

	@Test
	void aDelegatingSupplierThatKeepsTheChoiceToItselfIsToldAndNothingBelow() {
		Recording bottom = new Recording();
		PassingOn keeping = new PassingOn(bottom) {

			@Override
			public void selectedServiceInstance(ServiceInstance serviceInstance) {
				// keeps it
			}

		};

		assertThat(SelectedInstanceCallbacks.told(new PassingOn(keeping))).isSameAs(keeping);
	}

	@Test
	void aDelegatingSupplierWithItsOwnGetDelegateIsToldItself() {
		Recording bottom = new Recording();
		PassingOn ownDelegate = new PassingOn(bottom) {

			@Override
			public ServiceInstanceListSupplier getDelegate() {
				return new Plain();
			}

		};

		assertThat(SelectedInstanceCallbacks.told(ownDelegate)).isSameAs(ownDelegate);
	}

	@Test
	void nothingIsToldWhenNoSupplierWantsIt() {
		ServiceInstanceListSupplier top = new PassingOn(new PassingOn(new Plain()));

		assertThat(SelectedInstanceCallbacks.told(top)).isNull();
		assertThat(SelectedInstanceCallbacks.told(new Plain())).isNull();
	}

	@Test
	void bothWaysOfChoosingTellTheSupplierThatWantsIt() {
		Recording bottom = new Recording();
		Intercepting middle = new Intercepting(bottom);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", new PassingOn(middle));
		AtlasLoadBalancer loadBalancer = TestStages.graySmoothRoundRobin(SERVICE, List.of(A),
				new SimpleMeterRegistry());
		AtlasLoadBalancer overChain = new AtlasLoadBalancer(SERVICE,
				beans.getBeanProvider(ServiceInstanceListSupplier.class), loadBalancer.pipeline(), LiveStats.NONE);

		overChain.choose(new DefaultRequest<>()).block();
		overChain.chooseAndWait(new DefaultRequest<>());

		assertThat(middle.intercepted).containsExactly(A, A);
		assertThat(bottom.selected).containsExactly(A, A);
	}

	/** Emits one list of {@link #A} and records what it is told. */
	static class Recording implements ServiceInstanceListSupplier, SelectedInstanceCallback {

		final List<ServiceInstance> selected = new ArrayList<>();

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return Flux.just(List.of(A));
		}

		@Override
		public void selectedServiceInstance(ServiceInstance serviceInstance) {
			this.selected.add(serviceInstance);
		}

	}

	/** Emits one list of {@link #A}; not a callback. */
	static class Plain implements ServiceInstanceListSupplier {

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return Flux.just(List.of(A));
		}

	}

	/** Spring's behaviour: passes the choice on to its delegate. */
	static class PassingOn extends DelegatingServiceInstanceListSupplier {

		PassingOn(ServiceInstanceListSupplier delegate) {
			super(delegate);
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return this.delegate.get();
		}

	}

	/** Records the choice, then passes it on. */
	static class Intercepting extends PassingOn {

		final List<ServiceInstance> intercepted = new ArrayList<>();

		Intercepting(ServiceInstanceListSupplier delegate) {
			super(delegate);
		}

		@Override
		public void selectedServiceInstance(ServiceInstance serviceInstance) {
			this.intercepted.add(serviceInstance);
			super.selectedServiceInstance(serviceInstance);
		}

	}

}
