package dev.atlas.autoconfigure.affinity;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.routing.CallerZones;
import dev.atlas.loadbalancer.support.Scheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The callers' spread: read on the scheduler, a new object only on change, the last one
 * kept on failure, nothing read without a service name, nothing after close.
 */
@ExtendWith(OutputCaptureExtension.class)
class CallerCensusTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withPropertyValues("spring.application.name=caller");

	private final Deque<Runnable> tasks = new ArrayDeque<>();

	private final List<Long> delays = new ArrayList<>();

	private final Scheduler scheduler = (task, delayMillis) -> {
		this.tasks.add(task);
		this.delays.add(delayMillis);
	};

	private final AtomicReference<Object> instances = new AtomicReference<>(List.of());

	private final DiscoveryClient discovery = new DiscoveryClient() {

		@Override
		public String description() {
			return "test";
		}

		@Override
		@SuppressWarnings("unchecked")
		public List<ServiceInstance> getInstances(String serviceId) {
			Object answer = CallerCensusTest.this.instances.get();
			if (answer instanceof RuntimeException ex) {
				throw ex;
			}
			return serviceId.equals("caller") ? (List<ServiceInstance>) answer : List.of();
		}

		@Override
		public List<String> getServices() {
			return List.of("caller");
		}

	};

	private CallerCensus census(ApplicationContext context, ObjectProvider<DiscoveryClient> discovery) {
		return new CallerCensus(context.getBean(AtlasSettings.class), context.getBean(Environment.class), discovery,
				context.getBeanProvider(Registration.class), this.scheduler);
	}

	private ObjectProvider<DiscoveryClient> client() {
		DiscoveryClient client = this.discovery;
		return new ObjectProvider<>() {
			@Override
			public DiscoveryClient getObject() {
				return client;
			}

			@Override
			public DiscoveryClient getIfUnique() {
				return client;
			}
		};
	}

	private static ServiceInstance caller(String id, String... metadata) {
		Map<String, String> map = (metadata.length == 0) ? Map.of() : Map.of(metadata[0], metadata[1]);
		return new DefaultServiceInstance(id, "caller", "10.0.0." + id.length(), 8080, false, map);
	}

	private void runNext() {
		this.tasks.removeFirst().run();
	}

	@Test
	void readsOnTheSchedulerPerZoneAndGivesANewObjectOnlyOnChange(CapturedOutput output) {
		this.runner.withPropertyValues("atlas.affinity.callers-refresh-interval=3s").run((context) -> {
			this.instances.set(List.of(caller("a1", "zone", "A"), caller("a2", "zone", "a"),
					caller("b1", "nacos.cluster", "b"), caller("none")));
			CallerCensus census = census(context, client());
			assertThat(census.current()).as("unknown until the first read").isNull();
			assertThat(this.tasks).hasSize(1);
			census.current();
			assertThat(this.tasks).as("started once").hasSize(1);
			runNext();
			CallerZones first = census.current();
			assertThat(first).isEqualTo(new CallerZones(Map.of("a", 2, "b", 1), 1));
			assertThat(this.delays).containsExactly(0L, 3000L);
			runNext();
			assertThat(census.current()).as("same counts: the same object").isSameAs(first);
			this.instances.set(List.of(caller("a1", "zone", "a")));
			runNext();
			assertThat(census.current()).isEqualTo(new CallerZones(Map.of("a", 1), 0));
			assertThat(output).containsOnlyOnce(
					"1 of the 4 instances of this application's own service 'caller' " + "have no zone metadata");
		});
	}

	@Test
	void aFailedReadKeepsTheLastSpreadAndWarnsOncePerKindOfFailure(CapturedOutput output) {
		this.runner.run((context) -> {
			this.instances.set(List.of(caller("a1", "zone", "a")));
			CallerCensus census = census(context, client());
			census.current();
			runNext();
			CallerZones known = census.current();
			this.instances.set(new IllegalStateException("registry down"));
			runNext();
			runNext();
			assertThat(census.current()).isSameAs(known);
			assertThat(output).containsOnlyOnce("could not read the instances of this application's own service "
					+ "'caller' (the last spread is kept): java.lang.IllegalStateException: registry down");
			assertThat(this.tasks).as("still scheduled").hasSize(1);
		});
	}

	@Test
	void withoutAServiceNameOrADiscoveryClientNothingIsReadAndItIsSaidOnce(CapturedOutput output) {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
							SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
			.run((context) -> {
				CallerCensus census = census(context, client());
				census.current();
				runNext();
				assertThat(census.current()).isNull();
				assertThat(this.tasks).as("not rescheduled").isEmpty();
				assertThat(output).containsOnlyOnce(
						"the callers' spread over the zones is unknown (no " + "spring.application.name)");
			});
	}

	@Test
	void inAnotherModeNothingIsReadAndAfterCloseNothingIsScheduled() {
		this.runner.withPropertyValues("atlas.affinity.mode=threshold").run((context) -> {
			this.instances.set(List.of(caller("a1", "zone", "a")));
			CallerCensus census = census(context, client());
			census.current();
			runNext();
			assertThat(census.current()).as("threshold mode: not read").isNull();
			assertThat(this.tasks).hasSize(1);
			census.destroy();
			runNext();
			assertThat(this.tasks).as("closed: not rescheduled").isEmpty();
		});
	}

}
