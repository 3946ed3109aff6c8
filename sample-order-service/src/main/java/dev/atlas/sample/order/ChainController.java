package dev.atlas.sample.order;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code GET /chain/{id}}: two load-balanced hops and who served each. Hop 1 is a Feign
 * call to user-service made from an {@code @Async} method ({@link ChainService}); hop 2
 * is that user-service instance calling user-service again through a WebClient after
 * moving to {@code boundedElastic}. Send it {@code X-Service-Version: v2} and both hops
 * should land on v2 instances.
 */
@RestController
public class ChainController {

	static final long TIMEOUT_SECONDS = 15;

	private final ChainService chains;

	/**
	 * @param chains the async caller
	 */
	public ChainController(ChainService chains) {
		this.chains = chains;
	}

	/**
	 * @param id the user id
	 * @return the two hops: calling thread, serving instance and received headers of each
	 * @throws InterruptedException if interrupted while waiting for the async call
	 */
	@GetMapping("/chain/{id}")
	public ChainService.Chain chain(@PathVariable long id) throws InterruptedException {
		try {
			return this.chains.chain(id).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException cause) {
				throw cause;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new ResponseStatusException(HttpStatus.GATEWAY_TIMEOUT,
					"no answer from the async chain call within " + TIMEOUT_SECONDS + " s");
		}
	}

}
