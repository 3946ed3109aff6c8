/**
 * Atlas's configuration: one {@code @ConfigurationProperties} class per concern under
 * {@code atlas.*}, and {@link dev.atlas.autoconfigure.AtlasSettings}, which resolves the
 * per-service overlay {@code atlas.services.<service-id>.*} once per service.
 */
@NullMarked
package dev.atlas.autoconfigure;

import org.jspecify.annotations.NullMarked;
