/**
 * Small utilities shared by every package: once-per-key logging, property value parsing,
 * uniform draws.
 */
@NullMarked
package dev.atlas.loadbalancer.support;

import org.jspecify.annotations.NullMarked;
