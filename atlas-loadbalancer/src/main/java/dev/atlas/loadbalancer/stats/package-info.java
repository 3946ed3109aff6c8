/**
 * Live per-instance statistics of this caller (requests, in flight, latency), fed by
 * Spring Cloud LoadBalancer's request lifecycle and read by strategies by snapshot
 * position. Depends on {@code instance} and {@code spi} only.
 */
@NullMarked
package dev.atlas.loadbalancer.stats;

import org.jspecify.annotations.NullMarked;
