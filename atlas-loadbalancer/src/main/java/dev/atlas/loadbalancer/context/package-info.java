/**
 * The routing context of the inbound request being served (routing headers such as
 * {@code X-Service-Version}), carried across threads and reactive chains, and read from
 * outbound requests ({@code RequestHeaders}, with the engine's one cookie parser,
 * {@code Cookies}), and a request's key for consistent hashing ({@code HashKeys}).
 */
@NullMarked
package dev.atlas.loadbalancer.context;

import org.jspecify.annotations.NullMarked;
