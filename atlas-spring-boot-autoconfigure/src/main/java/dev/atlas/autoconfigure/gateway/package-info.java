/**
 * Atlas behind Spring Cloud Gateway (server, WebFlux): what the gateway's requests need
 * beyond the load-balanced clients, e.g. leaving out, on a {@code Retry} filter's retry,
 * the instance that just failed.
 */
@NullMarked
package dev.atlas.autoconfigure.gateway;

import org.jspecify.annotations.NullMarked;
