/**
 * Weight adjusters: warmup (slow start). Depends on {@code instance}, {@code spi} and
 * {@code support} only.
 */
@NullMarked
package dev.atlas.loadbalancer.weighting;

import org.jspecify.annotations.NullMarked;
