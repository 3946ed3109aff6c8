package dev.atlas.loadbalancer.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A service's routing replaced at runtime: a request reads one version and goes through
 * it alone (the stage's filters and the strategy of the same version), the next request
 * uses the new one, and a new version works on snapshots of its own.
 */
class ServicePipelineTest {

	private final List<ServiceInstance> fleet = List.of(instance("A"), instance("B"));

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version",
			new SimpleMeterRegistry());

	private final List<String> log = new ArrayList<>();

	/** A strategy that logs its name and always takes the first candidate. */
	private LoadBalancingStrategy strategy(String name) {
		return (candidates, context) -> {
			this.log.add(name);
			return 0;
		};
	}

	/**
	 * A filter that logs its name and keeps every candidate, memoizing on the snapshot.
	 */
	private CandidateFilter filter(String name, List<InstanceSnapshot> seen) {
		return (candidates, request) -> {
			this.log.add(name);
			seen.add(candidates);
			return candidates.derive(seen, (snapshot) -> snapshot);
		};
	}

	private Pipeline version(String name, CandidateFilter filter) {
		return new Pipeline(new SnapshotCache(this.parser), List.of(), List.of(filter), name, strategy(name));
	}

	private AtlasLoadBalancer balancer(ServicePipeline pipeline) {
		return balancer(pipeline, false);
	}

	/**
	 * The load balancer over the stage; with {@code wrapped}, an application's supplier
	 * tops the chain, so the stage runs as a supplier rather than inline.
	 */
	private AtlasLoadBalancer balancer(ServicePipeline pipeline, boolean wrapped) {
		AtlasServiceInstanceListSupplier stage = new AtlasServiceInstanceListSupplier(TestStages.discovery(this.fleet),
				null, pipeline);
		StaticListableBeanFactory beans = new StaticListableBeanFactory();
		beans.addBean("supplier", wrapped ? new DelegatingServiceInstanceListSupplier(stage) {
			@Override
			public Flux<List<ServiceInstance>> get() {
				return this.delegate.get();
			}

			@Override
			public Flux<List<ServiceInstance>> get(Request request) {
				// the version may change before the stage runs
				return Flux.defer(() -> this.delegate.get(request));
			}
		} : stage);
		return new AtlasLoadBalancer(SERVICE, beans.getBeanProvider(ServiceInstanceListSupplier.class), pipeline,
				LiveStats.NONE);
	}

	private static void choose(AtlasLoadBalancer balancer) {
		Mono.from(balancer.choose(new DefaultRequest<>())).block();
	}

	@Test
	void aRequestGoesThroughTheVersionItReadEvenWhenReplacedMeanwhile() {
		List<InstanceSnapshot> seen = new ArrayList<>();
		AtomicReference<ServicePipeline> holder = new AtomicReference<>();
		Pipeline v2 = version("v2", filter("v2", seen));
		CandidateFilter replacing = (candidates, request) -> {
			this.log.add("v1");
			// the rules change while this request is between its filters and its choice
			holder.get().update((current) -> v2);
			return candidates;
		};
		ServicePipeline pipeline = new ServicePipeline(version("v1", replacing));
		holder.set(pipeline);
		AtlasLoadBalancer balancer = balancer(pipeline);

		choose(balancer);
		assertThat(this.log).as("filters and strategy of one version").containsExactly("v1", "v1");
		assertThat(balancer.strategyName()).isEqualTo("v2");
		this.log.clear();
		choose(balancer);
		assertThat(this.log).as("the next request").containsExactly("v2", "v2");
	}

	@Test
	void aRequestGoesThroughOneVersionWhenTheStageIsNotTheTopOfTheChain() {
		AtomicReference<ServicePipeline> holder = new AtomicReference<>();
		Pipeline v2 = version("v2", filter("v2", new ArrayList<>()));
		Pipeline v1 = version("v1", filter("v1", new ArrayList<>()));
		ServicePipeline pipeline = new ServicePipeline(v1);
		holder.set(pipeline);
		AtlasLoadBalancer balancer = balancer(pipeline, true);
		// the rules change after the load balancer read them, before the stage runs
		Mono<?> choice = Mono.from(balancer.choose(new DefaultRequest<>()));
		pipeline.update((current) -> v2);
		choice.block();
		assertThat(this.log).as("the stage and the strategy of the version read").containsExactly("v1", "v1");
		this.log.clear();
		choose(balancer);
		assertThat(this.log).containsExactly("v2", "v2");
	}

	@Test
	void aNewVersionWorksOnSnapshotsOfItsOwn() {
		List<InstanceSnapshot> first = new ArrayList<>();
		List<InstanceSnapshot> second = new ArrayList<>();
		ServicePipeline pipeline = new ServicePipeline(version("v1", filter("v1", first)));
		AtlasLoadBalancer balancer = balancer(pipeline);
		choose(balancer);
		choose(balancer);
		assertThat(first.get(1)).as("one snapshot per list within a version").isSameAs(first.get(0));
		pipeline.update((current) -> version("v2", filter("v2", second)));
		choose(balancer);
		assertThat(second.get(0)).as("the same list, parsed again for the new version: no memo of v1 on it")
			.isNotSameAs(first.get(0))
			.containsExactlyElementsOf(first.get(0));
	}

	@Test
	void aFailedUpdateLeavesTheVersionInForce() {
		Pipeline v1 = version("v1", filter("v1", new ArrayList<>()));
		ServicePipeline pipeline = new ServicePipeline(v1);
		assertThatIllegalStateException().isThrownBy(() -> pipeline.update((current) -> {
			throw new IllegalStateException("cannot build");
		}));
		assertThat(pipeline.current()).isSameAs(v1);
	}

}
