/**
 * Lossless online and offline: register only when ready (stamped with
 * {@code atlas.registered-at}), and on shutdown or preStop deregister, refuse traffic,
 * drain, then let Spring Boot stop gracefully; and its properties
 * ({@code atlas.lifecycle.*}).
 */
@NullMarked
package dev.atlas.autoconfigure.lifecycle;

import org.jspecify.annotations.NullMarked;
