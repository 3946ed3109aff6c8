/**
 * ZooKeeper: a watch per called service evicts its cached instance list on every change,
 * whether or not this application registers itself (an
 * {@link dev.atlas.autoconfigure.registry.InstanceChangeSource}).
 */
@NullMarked
package dev.atlas.autoconfigure.zookeeper;

import org.jspecify.annotations.NullMarked;
