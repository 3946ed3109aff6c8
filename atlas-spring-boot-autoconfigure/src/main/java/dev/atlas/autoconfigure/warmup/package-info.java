/**
 * Warmup (slow start): its properties ({@code atlas.warmup.*}), its per-service
 * {@code warmup} section, and the runtime step that gives Atlas's warmup new rules while
 * it keeps the instances' ages.
 */
@NullMarked
package dev.atlas.autoconfigure.warmup;

import org.jspecify.annotations.NullMarked;
