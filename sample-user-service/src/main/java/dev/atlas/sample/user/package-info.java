/**
 * The sample provider, user-service: answers which instance served a call.
 */
@NullMarked
package dev.atlas.sample.user;

import org.jspecify.annotations.NullMarked;
