/**
 * Load reported by the providers themselves (ORCA's {@code endpoint-load-metrics}): the
 * provider's properties ({@code atlas.load-report.*}) and filters, the callers' reported
 * load per service with the request transformers that ask for it, the
 * {@code weighted-round-robin} strategy's registration, and the gateway's removal of
 * reports from the answers it passes on.
 */
@NullMarked
package dev.atlas.autoconfigure.orca;

import org.jspecify.annotations.NullMarked;
