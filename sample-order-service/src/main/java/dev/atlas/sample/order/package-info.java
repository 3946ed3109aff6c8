/**
 * The sample caller, order-service: calls user-service through the four load-balanced
 * clients and reports which instances served.
 */
@NullMarked
package dev.atlas.sample.order;

import org.jspecify.annotations.NullMarked;
