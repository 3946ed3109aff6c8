/**
 * The Spring Cloud LoadBalancer adapter: Atlas's supplier stage (last-known-good,
 * snapshot, weight adjusters, candidate filters), its load balancer (the strategy over
 * the candidates) and the one Reactor operator between them. Knows the concerns only
 * through {@code spi}.
 */
@NullMarked
package dev.atlas.loadbalancer.pipeline;

import org.jspecify.annotations.NullMarked;
