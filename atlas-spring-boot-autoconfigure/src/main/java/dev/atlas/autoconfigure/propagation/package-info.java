/**
 * Propagation of routing headers: captured from inbound requests (servlet, WebFlux),
 * carried across threads and reactive chains, written only on outbound load-balanced
 * calls (RestTemplate, RestClient, WebClient, Feign), by Spring Cloud's load-balancer
 * request transformers; and its properties ({@code atlas.propagation.*}).
 */
@NullMarked
package dev.atlas.autoconfigure.propagation;

import org.jspecify.annotations.NullMarked;
