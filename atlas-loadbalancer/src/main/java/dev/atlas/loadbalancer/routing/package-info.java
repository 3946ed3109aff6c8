/**
 * Candidate filters: gray-tag lanes, cluster affinity (locality) and retry avoidance.
 * Depends on {@code instance}, {@code spi} and {@code support} only.
 */
@NullMarked
package dev.atlas.loadbalancer.routing;

import org.jspecify.annotations.NullMarked;
