/**
 * The {@code /actuator/atlas} endpoint: what Atlas decided per service, and this
 * application's lifecycle state.
 */
@NullMarked
package dev.atlas.autoconfigure.actuator;

import org.jspecify.annotations.NullMarked;
