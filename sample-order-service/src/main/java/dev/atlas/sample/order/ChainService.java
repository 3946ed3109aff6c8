package dev.atlas.sample.order;

import java.util.concurrent.CompletableFuture;

import org.springframework.scheduling.annotation.Async;
import org.springframework.stereotype.Service;

/**
 * Calls user-service's two-hop endpoint through Feign from an {@code @Async} method, i.e.
 * on a thread of Spring Boot's {@code applicationTaskExecutor}, not on the thread serving
 * the inbound request (the gray header must survive the @Async hop and never leak into a
 * reused thread). Nothing here copies the gray header by hand.
 */
@Service
public class ChainService {

	private final UserClient feign;

	/**
	 * @param feign the Feign client of user-service
	 */
	public ChainService(UserClient feign) {
		this.feign = feign;
	}

	/**
	 * @param id the user id
	 * @return the two hops, completed on the async thread
	 */
	@Async
	public CompletableFuture<Chain> chain(long id) {
		String asyncThread = Thread.currentThread().getName();
		return CompletableFuture.completedFuture(Chain.of(asyncThread, this.feign.next(id)));
	}

	/**
	 * The answer of {@code GET /chain/{id}}.
	 *
	 * @param id the user id
	 * @param hop1 order-service → user-service (Feign, from the {@code @Async} thread)
	 * @param hop2 user-service → user-service (WebClient, from a {@code boundedElastic}
	 * thread)
	 */
	public record Chain(long id, Hop hop1, Hop hop2) {

		static Chain of(String asyncThread, UserChain user) {
			User next = user.next();
			return new Chain(user.id(), new Hop(asyncThread, user.servedBy(), user.received()),
					new Hop(user.nextHopThread(), next.servedBy(), next.received()));
		}

	}

	/**
	 * One load-balanced call of the chain.
	 *
	 * @param callerThread the thread that made the call
	 * @param servedBy the user-service instance that answered it
	 * @param received the routing headers it arrived with
	 */
	public record Hop(String callerThread, User.ServedBy servedBy, User.Received received) {

		/**
		 * @return the tag of the instance that answered, {@code ""} when untagged
		 */
		public String tag() {
			return (this.servedBy == null || this.servedBy.tag() == null) ? "" : this.servedBy.tag();
		}

	}

}
