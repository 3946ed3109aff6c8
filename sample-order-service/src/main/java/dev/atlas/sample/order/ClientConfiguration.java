package dev.atlas.sample.order;

import java.time.Duration;

import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The three load-balanced HTTP clients, declared the ordinary Spring Cloud way. (The
 * fourth, OpenFeign, is {@link UserClient}.)
 */
@Configuration(proxyBeanMethods = false)
public class ClientConfiguration {

	static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

	static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

	/**
	 * @param builder the RestTemplate builder of Spring Boot
	 * @return a RestTemplate that resolves {@code http://<service-id>/…} through the
	 * balancer; its own {@link CallerInterceptor} runs before the load-balancer
	 * interceptor
	 */
	@Bean
	@LoadBalanced
	RestTemplate loadBalancedRestTemplate(RestTemplateBuilder builder) {
		return builder.connectTimeout(CONNECT_TIMEOUT)
			.readTimeout(READ_TIMEOUT)
			.additionalInterceptors(new CallerInterceptor())
			.build();
	}

	/**
	 * The builder for calls that are not load-balanced, injected wherever no
	 * {@code @LoadBalanced} qualifier asks for the other: Eureka's client (the 'eureka'
	 * profile) takes the application's {@code RestClient.Builder} for its own calls to
	 * the Eureka server, and with only a load-balanced one it would resolve the server's
	 * host as a service id and never register (Atlas warns at startup).
	 * @return a plain RestClient builder
	 */
	@Bean
	@Primary
	RestClient.Builder restClientBuilder() {
		return RestClient.builder();
	}

	/**
	 * @return a RestClient builder whose clients resolve service ids through the balancer
	 */
	@Bean
	@LoadBalanced
	RestClient.Builder loadBalancedRestClientBuilder() {
		SimpleClientHttpRequestFactory requestFactory = new SimpleClientHttpRequestFactory();
		requestFactory.setConnectTimeout(CONNECT_TIMEOUT);
		requestFactory.setReadTimeout(READ_TIMEOUT);
		return RestClient.builder().requestFactory(requestFactory);
	}

	/**
	 * @return a WebClient builder whose clients resolve service ids through the balancer
	 */
	@Bean
	@LoadBalanced
	WebClient.Builder loadBalancedWebClientBuilder() {
		return WebClient.builder();
	}

}
