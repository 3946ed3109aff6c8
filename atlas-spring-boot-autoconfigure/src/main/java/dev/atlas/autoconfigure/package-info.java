/**
 * Atlas's auto-configuration, one package per concern: {@code loadbalancer} (the
 * load-balancer client contexts, the strategy choice), {@code gray}, {@code warmup},
 * {@code outlier}, {@code affinity} (each its properties, its sections and its runtime
 * steps), {@code settings} (the per-service sections bound generically), {@code runtime}
 * (rules changed at runtime), and the peripheral ones (lifecycle, propagation, registry
 * integrations, actuator, gateway). The properties classes still here belong to
 * peripheral concerns.
 */
@NullMarked
package dev.atlas.autoconfigure;

import org.jspecify.annotations.NullMarked;
