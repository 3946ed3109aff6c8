/**
 * Cluster affinity: the caller-level {@code atlas.affinity} section and the runtime step
 * that gives Atlas's affinity filter the caller's new rules.
 */
@NullMarked
package dev.atlas.autoconfigure.affinity;

import org.jspecify.annotations.NullMarked;
