/**
 * Atlas behind Spring Cloud Gateway: the lane rules applied to the requests the gateway
 * routes to load-balanced ({@code lb://}) services, their tag written as the gray header.
 */
@NullMarked
package dev.atlas.autoconfigure.gateway;

import org.jspecify.annotations.NullMarked;
