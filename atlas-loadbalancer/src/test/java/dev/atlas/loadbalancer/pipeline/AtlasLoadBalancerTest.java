package dev.atlas.loadbalancer.pipeline;

import java.util.ArrayList;
import java.util.List;

import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

class AtlasLoadBalancerTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private AtlasLoadBalancer loadBalancer(ServiceInstanceListSupplier supplier, AllZeroWeightsPolicy policy) {
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		if (supplier != null) {
			beans.addBean("supplier", supplier);
		}
		ObjectProvider<ServiceInstanceListSupplier> provider = beans.getBeanProvider(ServiceInstanceListSupplier.class);
		InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);
		return TestStages.loadBalancer(SERVICE, provider,
				new WeightedRandomBalancer(new StrategySettings(SERVICE, parser, policy, this.meters)), parser);
	}

	private static Response<ServiceInstance> choose(AtlasLoadBalancer loadBalancer) {
		return loadBalancer.choose(new DefaultRequest<>()).block();
	}

	@Test
	void respondsWithTheSuppliedObject() {
		ServiceInstance a = weighted("A", "1");
		Response<ServiceInstance> response = choose(
				loadBalancer(new FixedSupplier(List.of(a)), AllZeroWeightsPolicy.FAIL_OPEN));
		assertThat(response.hasServer()).isTrue();
		assertThat(response.getServer()).isSameAs(a);
	}

	@Test
	void emptyListGivesEmptyResponseNotAnError() {
		Response<ServiceInstance> response = choose(
				loadBalancer(new FixedSupplier(List.of()), AllZeroWeightsPolicy.FAIL_OPEN));
		assertThat(response).isInstanceOf(EmptyResponse.class);
		assertThat(response.hasServer()).isFalse();
	}

	@Test
	void supplierThatEmitsNothingOrIsMissingGivesEmptyResponse() {
		ServiceInstanceListSupplier silent = new FixedSupplier(null);
		assertThat(choose(loadBalancer(silent, AllZeroWeightsPolicy.FAIL_OPEN))).isInstanceOf(EmptyResponse.class);
		assertThat(choose(loadBalancer(null, AllZeroWeightsPolicy.FAIL_OPEN))).isInstanceOf(EmptyResponse.class);
	}

	@Test
	void allZeroRejectGivesEmptyResponse() {
		List<ServiceInstance> allZero = List.of(weighted("A", "0"), weighted("B", "0"));
		Response<ServiceInstance> response = choose(
				loadBalancer(new FixedSupplier(allZero), AllZeroWeightsPolicy.REJECT));
		assertThat(response).isNotNull().isInstanceOf(EmptyResponse.class);
		assertThat(this.meters.counter("atlas.weights.all.zero", "service", SERVICE, "policy", "reject").count())
			.isEqualTo(1);
	}

	@Test
	void tellsASelectedInstanceCallbackWhatWasChosen() {
		ServiceInstance a = weighted("A", "1");
		FixedSupplier supplier = new FixedSupplier(List.of(a));
		choose(loadBalancer(supplier, AllZeroWeightsPolicy.FAIL_OPEN));
		assertThat(supplier.selected).containsExactly(a);
	}

	/** Emits one fixed list (or nothing when {@code null}). */
	static final class FixedSupplier implements ServiceInstanceListSupplier, SelectedInstanceCallback {

		final List<ServiceInstance> selected = new ArrayList<>();

		private final List<ServiceInstance> instances;

		FixedSupplier(List<ServiceInstance> instances) {
			this.instances = instances;
		}

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return (this.instances != null) ? Flux.just(this.instances) : Flux.empty();
		}

		@Override
		public void selectedServiceInstance(ServiceInstance serviceInstance) {
			this.selected.add(serviceInstance);
		}

	}

}
