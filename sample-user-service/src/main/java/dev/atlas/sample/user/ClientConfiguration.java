package dev.atlas.sample.user;

import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The load-balanced client of the second hop, declared the ordinary Spring Cloud way: a
 * {@code @LoadBalanced WebClient.Builder}. Atlas (on the classpath through its starter)
 * chooses the instance and carries the inbound request's gray header to the outbound
 * call.
 */
@Configuration(proxyBeanMethods = false)
public class ClientConfiguration {

	/**
	 * @return a WebClient builder whose clients resolve {@code http://<service-id>/…}
	 * through the balancer
	 */
	@Bean
	@LoadBalanced
	WebClient.Builder loadBalancedWebClientBuilder() {
		return WebClient.builder();
	}

}
