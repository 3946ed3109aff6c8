/**
 * Spring Cloud's load-balanced clients adapted to Atlas: the blocking client
 * ({@link dev.atlas.autoconfigure.client.AtlasBlockingLoadBalancerClient}) and the
 * WebClient filters report why no instance was chosen, and the statistics lifecycle keeps
 * one {@code loadbalancer.requests.active} gauge per instance
 * ({@link dev.atlas.autoconfigure.client.IdentityKeyedStatsLifecycle}).
 */
@NullMarked
package dev.atlas.autoconfigure.client;

import org.jspecify.annotations.NullMarked;
