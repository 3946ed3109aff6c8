package dev.atlas.sample.order;

/**
 * What {@code user-service}'s {@code GET /users/{id}/next} returns: the user as the first
 * instance served it, and the user as a second instance served it when the first one
 * called user-service again (through a load-balanced WebClient, from a
 * {@code boundedElastic} thread).
 *
 * @param id the user id
 * @param name the user's name
 * @param servedBy the instance of the first hop
 * @param received the routing headers the first hop arrived with
 * @param nextHopThread the thread of the first instance that made the second hop
 * @param next the user as the second hop returned it
 */
public record UserChain(long id, String name, User.ServedBy servedBy, User.Received received, String nextHopThread,
		User next) {
}
