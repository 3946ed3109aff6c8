/**
 * Wiring of overload protection: the retry budget of each service
 * ({@code atlas.retry.budget.*}) fed by the request lifecycle and consulted by every
 * retry path Atlas sees (Spring Cloud's retry policies for RestTemplate, RestClient and
 * Feign, the retrying WebClient filter, Spring Cloud Gateway's {@code Retry} filter), and
 * the requeue of failures that never reached the server whatever the method.
 */
@NullMarked
package dev.atlas.autoconfigure.overload;

import org.jspecify.annotations.NullMarked;
