/**
 * Atlas's extension points: {@link dev.atlas.loadbalancer.spi.WeightAdjuster weight
 * adjusters} and {@link dev.atlas.loadbalancer.spi.CandidateFilter candidate filters},
 * applied in order to each instance-list snapshot, and
 * {@link dev.atlas.loadbalancer.spi.LoadBalancingStrategy strategies} registered by name
 * through a {@link dev.atlas.loadbalancer.spi.StrategyFactory}. Depends on
 * {@code instance} and {@code support} only; every concern package ({@code choice},
 * {@code routing}, {@code weighting}, {@code stats}) implements these, and
 * {@code pipeline} composes them.
 */
@NullMarked
package dev.atlas.loadbalancer.spi;

import org.jspecify.annotations.NullMarked;
