/**
 * The settings as the wiring uses them, bound generically: every concern declares its
 * per-service {@link dev.atlas.autoconfigure.settings.Section} (overlaid from
 * {@code atlas.<section>} and {@code atlas.services.<service-id>.<section>}) and its
 * caller-level {@link dev.atlas.autoconfigure.settings.CallerSection}; a service's rules
 * are one immutable {@link dev.atlas.autoconfigure.settings.ServiceSettings} keyed by
 * section. Names no concern.
 */
@NullMarked
package dev.atlas.autoconfigure.settings;

import org.jspecify.annotations.NullMarked;
