package dev.atlas.sample.order;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;

/**
 * The OpenFeign client of {@code user-service}, load-balanced by service id.
 */
@FeignClient("user-service")
public interface UserClient {

	/**
	 * @param id the user id
	 * @return the user and the instance that served it
	 */
	@GetMapping("/users/{id}")
	User user(@PathVariable("id") long id);

	/**
	 * @param id the user id
	 * @return the user, the instance that served it, and the second hop that instance
	 * made
	 */
	@GetMapping("/users/{id}/next")
	UserChain next(@PathVariable("id") long id);

}
