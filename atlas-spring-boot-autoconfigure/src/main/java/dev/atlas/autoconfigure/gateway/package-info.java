/**
 * Atlas behind Spring Cloud Gateway (Server WebFlux): the lane rules applied to the
 * requests the gateway routes to load-balanced ({@code lb://}) services, their tag
 * written as the gray header; and, on a {@code Retry} filter's retry, leaving out the
 * instance that just failed.
 */
@NullMarked
package dev.atlas.autoconfigure.gateway;

import org.jspecify.annotations.NullMarked;
