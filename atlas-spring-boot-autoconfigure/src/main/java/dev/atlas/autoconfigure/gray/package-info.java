/**
 * Gray-tag lanes: their properties ({@code atlas.gray.*}, the lane rules, and the
 * per-service {@code atlas.services.<service-id>.gray.*}), the per-service {@code gray}
 * section and the caller-level {@code atlas.gray} section
 * ({@link dev.atlas.autoconfigure.gray.GraySettings}), the gray router's runtime step,
 * and the lane rules where requests enter
 * ({@link dev.atlas.autoconfigure.gray.AtlasGrayAutoConfiguration}) kept on the rules in
 * force.
 */
@NullMarked
package dev.atlas.autoconfigure.gray;

import org.jspecify.annotations.NullMarked;
