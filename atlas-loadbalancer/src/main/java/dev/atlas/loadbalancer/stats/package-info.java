/**
 * Live per-instance statistics of this caller (requests, in flight, latency). The table
 * ({@code InstanceStats}, read by strategies by snapshot position through
 * {@code LiveStats}) keeps per-instance data ({@code InstanceCounts}) apart from the
 * latency algorithms ({@code LatencyEwma}, {@code PeakEwma}: Finagle's peak-EWMA); it is
 * fed by Spring Cloud LoadBalancer's request lifecycle ({@code InstanceStatsLifecycle}).
 * Depends on {@code instance} and {@code spi} only.
 */
@NullMarked
package dev.atlas.loadbalancer.stats;

import org.jspecify.annotations.NullMarked;
