/**
 * Gray-tag lanes: the per-service {@code gray} section and the caller-level
 * {@code atlas.gray} section, the gray router's runtime step, and the lane rules where
 * requests enter kept on the rules in force.
 */
@NullMarked
package dev.atlas.autoconfigure.gray;

import org.jspecify.annotations.NullMarked;
