/**
 * Spring Cloud's load-balanced clients adapted to Atlas: the blocking client
 * ({@link dev.atlas.autoconfigure.client.AtlasBlockingLoadBalancerClient}) and the
 * WebClient filters report why no instance was chosen, and Spring Cloud's
 * {@code loadbalancer.requests.*} meters, when switched on, stay bounded by the instances
 * in use and the routes
 * ({@link dev.atlas.autoconfigure.client.LoadBalancerRequestMeters}).
 */
@NullMarked
package dev.atlas.autoconfigure.client;

import org.jspecify.annotations.NullMarked;
