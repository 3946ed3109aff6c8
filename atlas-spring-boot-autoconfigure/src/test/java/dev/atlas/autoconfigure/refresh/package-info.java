/**
 * Tests of routing rules changed at runtime.
 */
@NullMarked
package dev.atlas.autoconfigure.refresh;

import org.jspecify.annotations.NullMarked;
