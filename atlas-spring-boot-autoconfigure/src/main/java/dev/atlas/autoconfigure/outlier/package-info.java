/**
 * Outlier detection: the per-service {@code outlier} section, the runtime steps that give
 * the detector (and its ejection filter) and the stale-list check new rules while
 * ejections and failure counts stay.
 */
@NullMarked
package dev.atlas.autoconfigure.outlier;

import org.jspecify.annotations.NullMarked;
