package dev.atlas.autoconfigure.runtime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.loadbalancer.AtlasLoadBalancerAutoConfiguration;
import dev.atlas.autoconfigure.loadbalancer.ServiceRouting;
import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.pipeline.AtlasLoadBalancer;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The worked example of a runtime-changeable concern that is the application's own: a
 * candidate filter that leaves out blocked hosts, with its own rules section
 * ({@code atlas.blocklist.hosts}, overlaid by
 * {@code atlas.services.<service-id>.blocklist.hosts}). The application writes its
 * properties, its rules (with the {@link Section} declaring them), its filter and its
 * {@link RuntimeStep}, and registers them; no Atlas class changes. A refresh changes the
 * rule and the next picks follow it.
 */
@ExtendWith(OutputCaptureExtension.class)
class ApplicationStepReconfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AtlasLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
						SimpleDiscoveryClientAutoConfiguration.class, UtilAutoConfiguration.class))
		.withUserConfiguration(BlocklistConfiguration.class)
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("spring.cloud.discovery.client.simple.instances.user-service[0].uri=http://u1:8080",
				"spring.cloud.discovery.client.simple.instances.user-service[1].uri=http://u2:8080",
				"spring.cloud.discovery.client.simple.instances.billing[0].uri=http://b1:8080",
				"spring.cloud.discovery.client.simple.instances.billing[1].uri=http://b2:8080",
				"atlas.services.user-service.blocklist.hosts=u1");

	@Test
	void theApplicationsFilterTakesItsNewRuleFromARefresh(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(hosts(context, "user-service")).as("blocked at startup").containsExactly("u2");
			assertThat(hosts(context, "billing")).as("another service: nothing blocked").containsExactly("b1", "b2");
			BlocklistFilter before = filter(context, "user-service");

			change(context, Map.of("atlas.services.user-service.blocklist.hosts", "u2", "atlas.blocklist.hosts", "b2"));

			assertThat(hosts(context, "user-service")).as("the new rule, on the next picks").containsExactly("u1");
			assertThat(hosts(context, "billing")).as("the global rule").containsExactly("b1");
			assertThat(filter(context, "user-service")).as("rebuilt from its new rules").isNotSameAs(before);
			assertThat(output.getOut())
				.contains("Atlas rules of service 'user-service' changed: blocklist.hosts [u1] → [u2]");
			assertThat(routing(context, "user-service").rulesView()).containsEntry("blocklist",
					Map.of("hosts", List.of("u2")));
			assertThat(routing(context, "user-service").settings().get(BlocklistRules.SECTION).hosts())
				.containsExactly("u2");
			assertThat(output.getOut()).as("a section of its own, bound generically").doesNotContain("sets nothing");
		});
	}

	@Test
	void anInvalidRuleOfTheApplicationsSectionIsRejectedAndTheRuleInForceStays(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(hosts(context, "user-service")).containsExactly("u2");
			change(context, Map.of("atlas.services.user-service.blocklist.hosts", " "));
			assertThat(output.getOut()).contains("Atlas rejected the configuration change for service "
					+ "'user-service', whose previous rules stay in force: Invalid "
					+ "atlas.services.user-service.blocklist.hosts: a host must not be blank");
			assertThat(hosts(context, "user-service")).containsExactly("u2");
		});
	}

	/** Changes properties as a refresh would, and publishes the event. */
	private static void change(AssertableApplicationContext context, Map<String, Object> properties) {
		MapPropertySource source = (MapPropertySource) context.getEnvironment()
			.getPropertySources()
			.get("runtime-change");
		if (source == null) {
			source = new MapPropertySource("runtime-change", new HashMap<>());
			context.getEnvironment().getPropertySources().addFirst(source);
		}
		source.getSource().putAll(properties);
		context.publishEvent(new EnvironmentChangeEvent(context, Set.copyOf(properties.keySet())));
	}

	/** The hosts 200 picks reach, sorted. */
	private static List<String> hosts(AssertableApplicationContext context, String serviceId) {
		AtlasLoadBalancer balancer = (AtlasLoadBalancer) context.getBean(LoadBalancerClientFactory.class)
			.getInstance(serviceId);
		Set<String> hosts = new HashSet<>();
		for (int i = 0; i < 200; i++) {
			hosts.add(Mono.from(balancer.choose(new DefaultRequest<>())).block().getServer().getHost());
		}
		return hosts.stream().sorted().toList();
	}

	private static ServiceRouting routing(AssertableApplicationContext context, String serviceId) {
		return context.getBean(LoadBalancerClientFactory.class).getInstance(serviceId, ServiceRouting.class);
	}

	private static BlocklistFilter filter(AssertableApplicationContext context, String serviceId) {
		return routing(context, serviceId).step(BlocklistFilter.class);
	}

	/** The application's properties of its section: {@code hosts}. */
	public static class BlocklistProperties {

		/** Hosts never to call. */
		private List<String> hosts = new ArrayList<>();

		public List<String> getHosts() {
			return this.hosts;
		}

		public void setHosts(List<String> hosts) {
			this.hosts = hosts;
		}

	}

	/**
	 * The application's rules, validated, and the section that declares them.
	 *
	 * @param hosts hosts never to call
	 */
	record BlocklistRules(List<String> hosts) {

		static final Section<BlocklistProperties, BlocklistRules> SECTION = Section.of("blocklist",
				BlocklistProperties::new, (properties, context) -> {
					try {
						return new BlocklistRules(properties.getHosts());
					}
					catch (IllegalArgumentException ex) {
						throw new IllegalArgumentException(
								"Invalid " + context.propertyName("blocklist.hosts") + ": " + ex.getMessage(), ex);
					}
				});

		BlocklistRules {
			hosts = List.copyOf(hosts);
			if (hosts.stream().anyMatch(String::isBlank)) {
				throw new IllegalArgumentException("a host must not be blank");
			}
		}

	}

	/** The application's filter: leaves out the blocked hosts, once per snapshot. */
	static final class BlocklistFilter implements CandidateFilter {

		private final CandidateFilter excluding;

		BlocklistFilter(BlocklistRules rules) {
			this.excluding = CandidateFilter.excluding((instance) -> rules.hosts().contains(instance.getHost()));
		}

		@Override
		public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
			return this.excluding.filter(candidates, request);
		}

	}

	/**
	 * The application's step: a new filter from the new rules (it learns nothing, so
	 * nothing is carried over). One bean serves every service: it finds the service's
	 * filter in the version in force.
	 */
	static final class BlocklistStep implements RuntimeStep {

		@Override
		public Rebuild prepare(RulesChange change) {
			BlocklistFilter filter = change.step(BlocklistFilter.class);
			if (filter == null || !change.changed(BlocklistRules.SECTION)) {
				return null;
			}
			BlocklistFilter next = new BlocklistFilter(change.rules(BlocklistRules.SECTION));
			return Rebuild.replacing(filter, () -> next);
		}

	}

	/** Registers the section, the step, and the filter of every service. */
	@Configuration(proxyBeanMethods = false)
	@LoadBalancerClients(defaultConfiguration = BlocklistClientConfiguration.class)
	static class BlocklistConfiguration {

		@Bean
		Section<?, ?> blocklistSection() {
			return BlocklistRules.SECTION;
		}

		@Bean
		BlocklistStep blocklistStep() {
			return new BlocklistStep();
		}

	}

	/** The filter of one service, from the service's rules as its context is created. */
	@Configuration(proxyBeanMethods = false)
	static class BlocklistClientConfiguration {

		@Bean
		BlocklistFilter blocklistFilter(ServiceSettings settings) {
			return new BlocklistFilter(settings.get(BlocklistRules.SECTION));
		}

	}

}
