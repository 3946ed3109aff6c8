package dev.atlas.autoconfigure.loadbalancer;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which balancer is the application's: recognised by the class declaring its factory
 * method, not by its bean name.
 */
class OnNoApplicationLoadBalancerConditionTest {

	@Test
	void theApplicationsBalancerIsItsOwnWhateverItsName() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(SameNameAsAtlas.class);
			context.refresh();
			assertThat(OnNoApplicationLoadBalancerCondition.applicationBalancer(context.getBeanFactory()))
				.isEqualTo("atlasLoadBalancer");
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class SameNameAsAtlas {

		@Bean
		ReactorLoadBalancer<ServiceInstance> atlasLoadBalancer() {
			return new RoundRobinLoadBalancer(null, "svc");
		}

	}

}
