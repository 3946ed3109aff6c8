/**
 * Propagation of routing headers: captured from inbound requests (servlet, WebFlux),
 * carried across threads and reactive chains, written on outbound load-balanced calls
 * (RestTemplate, RestClient, WebClient, Feign).
 */
@NullMarked
package dev.atlas.autoconfigure.propagation;

import org.jspecify.annotations.NullMarked;
