/**
 * Outlier detection: instances that fail several requests in a row are ejected for a time
 * that grows with each ejection, probed off the request path, and returned when a probe
 * passes; a panic threshold keeps a lane from being emptied. Envoy's outlier detection is
 * the reference for the semantics and defaults. The detector ({@code OutlierDetector},
 * counting outcomes) keeps per-instance state ({@code TrackedInstance}), the ejection
 * state and its transitions ({@code Ejector}), probing ({@code Prober}) and meters
 * ({@code OutlierMeters}) apart; {@code OutlierEjection} is the candidate filter. The
 * detector is fed by Spring Cloud LoadBalancer's request lifecycle
 * ({@code OutlierLifecycle}: HTTP outcome to {@code Outcome}).
 */
@NullMarked
package dev.atlas.loadbalancer.outlier;

import org.jspecify.annotations.NullMarked;
