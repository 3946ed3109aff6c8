/**
 * Nacos: instance changes pushed by the Nacos client evict the cached lists of the
 * services they concern (an
 * {@link dev.atlas.autoconfigure.registry.InstanceChangeSource}); Spring Cloud Alibaba's
 * shutdown wait gives way to Atlas's drain.
 */
@NullMarked
package dev.atlas.autoconfigure.nacos;

import org.jspecify.annotations.NullMarked;
