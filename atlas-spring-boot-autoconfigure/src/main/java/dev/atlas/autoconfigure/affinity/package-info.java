/**
 * Cluster affinity: its properties ({@code atlas.affinity.*}), the caller-level
 * {@code atlas.affinity} section, this caller's own cluster
 * ({@link dev.atlas.autoconfigure.affinity.CallerCluster}, resolved at the first request
 * and again on runtime changes), and the runtime step that gives Atlas's affinity filter
 * the caller's new rules.
 */
@NullMarked
package dev.atlas.autoconfigure.affinity;

import org.jspecify.annotations.NullMarked;
