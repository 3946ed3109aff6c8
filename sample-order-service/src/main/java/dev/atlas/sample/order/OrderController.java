package dev.atlas.sample.order;

import org.jspecify.annotations.Nullable;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /orders/{id}?client=…}: one order, whose user is fetched from
 * {@code user-service} through the named client.
 */
@RestController
public class OrderController {

	private final UserCalls userCalls;

	/**
	 * @param userCalls the calls to user-service
	 */
	public OrderController(UserCalls userCalls) {
		this.userCalls = userCalls;
	}

	/**
	 * @param id the order id (also used as the user id)
	 * @param client {@code rest-template}, {@code rest-client}, {@code web-client} or
	 * {@code feign}
	 * @return the order with its user and the instance that served the user
	 */
	@GetMapping("/orders/{id}")
	public Order order(@PathVariable long id, @RequestParam(defaultValue = "rest-template") String client) {
		ClientType type = ClientType.of(client);
		return new Order(id, type.id(), this.userCalls.user(type, id));
	}

	/**
	 * The response body.
	 *
	 * @param orderId the order id
	 * @param client the client used
	 * @param user the user, as user-service returned it
	 */
	public record Order(long orderId, String client, @Nullable User user) {
	}

}
