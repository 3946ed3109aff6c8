/**
 * Load reported by the providers themselves (ORCA's {@code endpoint-load-metrics}): the
 * reports' format ({@code LoadReport}), the weights gRFC A58 computes from them per
 * service ({@code ReportedLoad}), and their feed from the request lifecycle. The
 * {@code weighted-round-robin} strategy reads the weights through
 * {@code spi.ReportedWeights}. Depends on {@code instance}, {@code spi} and
 * {@code support} only.
 */
@NullMarked
package dev.atlas.loadbalancer.orca;

import org.jspecify.annotations.NullMarked;
