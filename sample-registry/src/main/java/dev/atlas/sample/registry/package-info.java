/**
 * An in-process Apache ZooKeeper for the demo and the samples' integration tests.
 */
@NullMarked
package dev.atlas.sample.registry;

import org.jspecify.annotations.NullMarked;
