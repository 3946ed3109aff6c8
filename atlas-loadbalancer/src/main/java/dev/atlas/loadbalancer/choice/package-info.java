/**
 * Atlas's built-in strategies ({@code weighted-random}, {@code smooth-round-robin},
 * {@code least-request}, {@code peak-ewma}, {@code ring-hash},
 * {@code weighted-round-robin}), each registered by name through its
 * {@code StrategyFactory}, and the pure, cited algorithms behind them (Vose's alias
 * table, nginx's smooth weighted round robin, the hash ring with its bounded load kept
 * apart, gRPC's static stride scheduler). {@code weighted-round-robin} reads the weights
 * of reported load through {@code spi.ReportedWeights}. The ring-hash key is read and
 * hashed through {@code PickContext} ({@code context}'s {@code HashKeys}). Depends on
 * {@code instance}, {@code spi} and {@code support} only.
 */
@NullMarked
package dev.atlas.loadbalancer.choice;

import org.jspecify.annotations.NullMarked;
