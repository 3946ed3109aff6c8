/**
 * Makes Atlas the load balancer of every load-balancer client context: the built-in
 * pipeline steps as conditional beans, the strategy registry, the subscription of every
 * service to the registry's change sources, request statistics, startup diagnostics.
 */
@NullMarked
package dev.atlas.autoconfigure.loadbalancer;

import org.jspecify.annotations.NullMarked;
