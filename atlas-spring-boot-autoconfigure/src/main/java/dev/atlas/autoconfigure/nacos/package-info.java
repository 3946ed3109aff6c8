/**
 * Nacos: instance changes pushed by the Nacos client evict the cached lists of the
 * services they concern.
 */
@NullMarked
package dev.atlas.autoconfigure.nacos;

import org.jspecify.annotations.NullMarked;
