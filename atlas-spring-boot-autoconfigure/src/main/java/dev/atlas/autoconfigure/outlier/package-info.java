/**
 * Outlier detection: its properties ({@code atlas.outlier.*}), its per-service
 * {@code outlier} section, and the runtime steps that give the detector (and Atlas's
 * ejection filter) and the stale-list check new rules while ejections and failure counts
 * stay.
 */
@NullMarked
package dev.atlas.autoconfigure.outlier;

import org.jspecify.annotations.NullMarked;
