/**
 * The Spring Cloud LoadBalancer adapter. A service's routing is a {@code Pipeline}
 * version (snapshot cache, weight adjusters, candidate filters, strategy) held by its
 * {@code ServicePipeline}; Atlas's supplier stage (last-known-good, then the version's
 * adjusters and filters) and its load balancer share it. Per request, the load balancer
 * reads the version once and hands the request to that version's {@code Chooser}, the one
 * collaborator of the subscriber that makes the choice (the one Reactor operator,
 * {@code FirstListChoice}, for {@code choose}; {@code AwaitedChoice}, which subscribes to
 * the supplier chain itself, for the blocking clients' {@code chooseAndWait}): the
 * chooser applies the stage inline when it tops the chain, lets the strategy choose,
 * builds the response or the empty one with its reason, and reads the live statistics for
 * the strategy. Knows the concerns only through {@code spi}.
 */
@NullMarked
package dev.atlas.loadbalancer.pipeline;

import org.jspecify.annotations.NullMarked;
