/**
 * The settings as the wiring uses them, bound generically: every concern declares its
 * per-service {@link dev.atlas.autoconfigure.settings.Section} (overlaid from
 * {@code atlas.<section>} and {@code atlas.services.<service-id>.<section>}) and its
 * caller-level {@link dev.atlas.autoconfigure.settings.CallerSection}; a service's rules
 * are one immutable {@link dev.atlas.autoconfigure.settings.ServiceSettings} keyed by
 * section. This package names no concern: the configured service keys are bound
 * generically, and the classes that describe {@code atlas.*} and
 * {@code atlas.services.<service-id>.*} for the configuration metadata
 * ({@code AtlasProperties}, {@code ServiceProperties}) are in the composition root,
 * {@code dev.atlas.autoconfigure.loadbalancer}.
 */
@NullMarked
package dev.atlas.autoconfigure.settings;

import org.jspecify.annotations.NullMarked;
