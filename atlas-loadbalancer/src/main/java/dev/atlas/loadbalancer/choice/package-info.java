/**
 * Atlas's built-in strategies ({@code weighted-random}, {@code smooth-round-robin}), each
 * registered by name through its {@code FACTORY}, and the pure, cited algorithms behind
 * them (Vose's alias table, nginx's smooth weighted round robin). Depends on
 * {@code instance}, {@code spi} and {@code support} only.
 */
@NullMarked
package dev.atlas.loadbalancer.choice;

import org.jspecify.annotations.NullMarked;
