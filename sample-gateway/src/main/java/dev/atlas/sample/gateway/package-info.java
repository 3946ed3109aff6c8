/**
 * The sample gateway: Spring Cloud Gateway in front of user-service and order-service,
 * balancing through Atlas.
 */
@NullMarked
package dev.atlas.sample.gateway;

import org.jspecify.annotations.NullMarked;
