/**
 * Following the registry: the
 * {@link dev.atlas.autoconfigure.registry.InstanceChangeSource} SPI that a registry
 * integration ({@code nacos}, {@code zookeeper}) implements, the
 * {@link dev.atlas.autoconfigure.registry.RegistryEventRefresher} that evicts cached
 * instance lists on a change, and their properties ({@code atlas.registry.*}).
 */
@NullMarked
package dev.atlas.autoconfigure.registry;

import org.jspecify.annotations.NullMarked;
