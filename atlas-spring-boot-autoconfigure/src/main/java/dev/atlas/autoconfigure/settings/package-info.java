/**
 * The settings as the wiring uses them, bound generically: every concern declares its
 * per-service {@link dev.atlas.autoconfigure.settings.Section} (overlaid from
 * {@code atlas.<section>} and {@code atlas.services.<service-id>.<section>}) and its
 * caller-level {@link dev.atlas.autoconfigure.settings.CallerSection}; a service's rules
 * are one immutable {@link dev.atlas.autoconfigure.settings.ServiceSettings} keyed by
 * section. The generic code names no concern; {@code ServiceProperties}, which only
 * describes {@code atlas.services.<service-id>.*} for the configuration metadata, names
 * the built-in sections' properties classes.
 */
@NullMarked
package dev.atlas.autoconfigure.settings;

import org.jspecify.annotations.NullMarked;
