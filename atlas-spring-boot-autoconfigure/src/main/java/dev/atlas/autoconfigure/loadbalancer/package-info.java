/**
 * Makes Atlas the load balancer of every load-balancer client context: the child
 * configuration with the built-in pipeline steps as conditional beans (and their runtime
 * steps), the sections every service's settings are resolved with, the strategy choice
 * ({@code atlas.loadbalancer},
 * {@link dev.atlas.autoconfigure.loadbalancer.StrategyRules}, the strategy registry),
 * event-driven refresh of cached instance lists, request statistics, startup diagnostics.
 */
@NullMarked
package dev.atlas.autoconfigure.loadbalancer;

import org.jspecify.annotations.NullMarked;
