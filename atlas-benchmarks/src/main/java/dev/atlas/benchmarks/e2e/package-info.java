/**
 * The end-to-end benchmark's report: what Atlas costs on a whole request, from the rounds
 * {@code atlas-benchmarks/e2e.sh} records.
 */
@NullMarked
package dev.atlas.benchmarks.e2e;

import org.jspecify.annotations.NullMarked;
