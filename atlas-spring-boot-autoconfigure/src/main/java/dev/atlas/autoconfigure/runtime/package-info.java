/**
 * Rules changed at runtime, without a restart, and without naming any step: Spring
 * Cloud's refresh reaches {@link dev.atlas.autoconfigure.runtime.RuntimeRules}, which
 * resolves every service's settings again and puts a valid change in force through each
 * service's {@link dev.atlas.autoconfigure.runtime.ServiceRules}: a loop over the
 * {@link dev.atlas.autoconfigure.runtime.RuntimeStep}s of the service (the built-in ones
 * and the application's), in two phases (build everything that may fail, then commit).
 * Caller-level consumers of the rules hear of changes through
 * {@link dev.atlas.autoconfigure.runtime.ReloadListener}.
 */
@NullMarked
package dev.atlas.autoconfigure.runtime;

import org.jspecify.annotations.NullMarked;
