package dev.atlas.sample.order;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Calls {@code GET http://user-service/users/{id}} through the chosen client.
 */
@Component
public class UserCalls {

	static final String USER_URL = "http://user-service/users/{id}";

	private final RestTemplate restTemplate;

	private final RestClient restClient;

	private final WebClient webClient;

	private final UserClient feign;

	/**
	 * @param restTemplate the load-balanced RestTemplate
	 * @param restClientBuilder the load-balanced RestClient builder
	 * @param webClientBuilder the load-balanced WebClient builder
	 * @param feign the Feign client
	 */
	public UserCalls(RestTemplate restTemplate, @LoadBalanced RestClient.Builder restClientBuilder,
			WebClient.Builder webClientBuilder, UserClient feign) {
		this.restTemplate = restTemplate;
		this.restClient = restClientBuilder.build();
		this.webClient = webClientBuilder.build();
		this.feign = feign;
	}

	/**
	 * @param client the client to call through
	 * @param id the user id
	 * @return the user, with the instance that served it
	 */
	public @Nullable User user(ClientType client, long id) {
		return switch (client) {
			case REST_TEMPLATE -> this.restTemplate.getForObject(USER_URL, User.class, id);
			case REST_CLIENT -> this.restClient.get().uri(USER_URL, id).retrieve().body(User.class);
			case WEB_CLIENT ->
				this.webClient.get().uri(USER_URL, id).retrieve().bodyToMono(User.class).block(Duration.ofSeconds(10));
			case FEIGN -> this.feign.user(id);
		};
	}

}
