/**
 * The parsed view of a service's instances:
 * {@link dev.atlas.loadbalancer.instance.InstanceSnapshot snapshots} whose attributes are
 * read once per instance list, with per-snapshot memoization; last-known-good lists.
 */
@NullMarked
package dev.atlas.loadbalancer.instance;

import org.jspecify.annotations.NullMarked;
